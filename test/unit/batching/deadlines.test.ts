import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { DeadlineTimer } from '../../../src/batching/deadlines.js'

describe('DeadlineTimer', () => {
  beforeEach(() => {
    vi.useFakeTimers()
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('expires each call when its own deadline passes, in any order of watching', () => {
    const expired: string[] = []
    const timer = new DeadlineTimer<string>((entry) => expired.push(entry))
    const now = Date.now()
    timer.watch('late', now + 30)
    timer.watch('early', now + 10)
    timer.watch('middle', now + 20)
    vi.advanceTimersByTime(10)
    expect(expired).toEqual(['early'])
    vi.advanceTimersByTime(10)
    expect(expired).toEqual(['early', 'middle'])
    vi.advanceTimersByTime(10)
    expect(expired).toEqual(['early', 'middle', 'late'])
    expect(vi.getTimerCount()).toBe(0)
  })

  it('never expires a forgotten call, and lets the process sleep once nothing is watched', () => {
    const expired: string[] = []
    const timer = new DeadlineTimer<string>((entry) => expired.push(entry))
    const now = Date.now()
    timer.watch('a', now + 10)
    timer.watch('b', now + 20)
    timer.forget('a')
    timer.forget('a') // twice is harmless
    vi.advanceTimersByTime(15)
    expect(expired).toEqual([])
    timer.forget('b')
    expect(vi.getTimerCount()).toBe(0)
    vi.advanceTimersByTime(100)
    expect(expired).toEqual([])
  })

  it('a call that forgets another while it expires does not stop the others from expiring', () => {
    const expired: string[] = []
    const now = Date.now()
    const timer = new DeadlineTimer<string>((entry) => {
      expired.push(entry)
      if (entry === 'first') timer.forget('second')
    })
    timer.watch('first', now + 5)
    timer.watch('second', now + 5)
    timer.watch('third', now + 5)
    timer.watch('fourth', now + 50)
    vi.advanceTimersByTime(5)
    expect(expired).toEqual(['first', 'third'])
    vi.advanceTimersByTime(45)
    expect(expired).toEqual(['first', 'third', 'fourth'])
  })

  it('a call watched while another expires keeps its own, earlier deadline', () => {
    const expired: string[] = []
    const now = Date.now()
    const timer = new DeadlineTimer<string>((entry) => {
      expired.push(entry)
      if (entry === 'first') timer.watch('watched during expiry', Date.now() + 5)
    })
    timer.watch('first', now + 10)
    timer.watch('late', now + 100)
    vi.advanceTimersByTime(10)
    expect(expired).toEqual(['first'])
    vi.advanceTimersByTime(5)
    expect(expired).toEqual(['first', 'watched during expiry'])
    vi.advanceTimersByTime(85)
    expect(expired).toEqual(['first', 'watched during expiry', 'late'])
  })
})
