import { describe, expect, it } from 'vitest'
import { RequestScope } from '../../../src/deployment/request-scope.js'

describe('RequestScope as a cancel signal', () => {
  it('fires its listeners, functions and objects alike, once, with its reason', () => {
    const source = new RequestScope('http', undefined, undefined, undefined)
    const heard: string[] = []
    source.addEventListener('abort', () => heard.push('function'))
    source.addEventListener('abort', { handleEvent: () => heard.push('object') })
    const reason = new Error('gone')
    source.cancel(reason)
    source.cancel(new Error('again'))
    expect(heard).toEqual(['function', 'object'])
    expect(source.aborted).toBe(true)
    expect(source.reason).toBe(reason)
  })

  it('forgets a removed listener, and keeps none added after it fired', () => {
    const source = new RequestScope('http', undefined, undefined, undefined)
    let calls = 0
    const listener = () => calls++
    source.addEventListener('abort', listener)
    source.removeEventListener('abort', listener)
    source.cancel(new Error('gone'))
    source.addEventListener('abort', listener)
    expect(calls).toBe(0)
  })
})
