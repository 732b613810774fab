/**
 * serveWorker()'s options are checked where the Worker module is loaded:
 * a wrong one stops `wrangler dev` with what to pass, rather than failing
 * on the first request. (The module runs in Node too: it needs nothing of
 * workerd until a request comes.)
 */
import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import { deployment } from '../../../src/index.js'
import { serveWorker } from '../../../src/runtime/workers/worker.js'

class Adder {
  async fetch(): Promise<string> {
    return '2'
  }
}

describe('serveWorker() options', () => {
  it('refuses what it cannot use, saying what to pass', () => {
    const serve = (options: unknown) => () => serveWorker(new Hono(), options as never)
    expect(serve({ deployments: [Adder] })).toThrow(
      'serveWorker: options.deployments must be an array of deployments made with deployment(Class), received an array (wrap Adder as deployment(Adder))',
    )
    expect(serve({ deployments: 'Adder' })).toThrow(/options\.deployments must be an array of deployments .*received "Adder"$/)
    expect(serve({ deployment: [deployment(Adder)] })).toThrow('serveWorker() has no option "deployment"; known options: deployments, dashboard')
    expect(serve('dashboard')).toThrow(`serveWorker()'s options must be an object like { dashboard }, received "dashboard"`)
  })

  it('takes deployments made with deployment()', () => {
    expect(typeof serveWorker(new Hono(), { deployments: [deployment(Adder)] }).fetch).toBe('function')
  })
})
