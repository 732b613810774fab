/**
 * serveWorker()'s options are checked where the Worker module is loaded:
 * a wrong one stops `wrangler dev` with what to pass, rather than failing
 * on the first request. (The module runs in Node too: it needs nothing of
 * workerd until a request comes.)
 */
import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import { deployment } from '../../../src/index.js'
import { pathStartsWith, serveWorker } from '../../../src/runtime/workers/worker.js'

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

describe('serveWorker() routing', () => {
  const app = new Hono()
  let received: Request | undefined
  app.get('*', (c) => {
    received = c.req.raw
    return c.text('app')
  })
  const worker = serveWorker(app)
  const get = async (url: string) => (await worker.fetch(new Request(url), {}, {})).text()

  it('answers the operational routes itself, by the path alone', async () => {
    expect(JSON.parse(await get('http://worker.test/-/healthz'))).toMatchObject({ status: 'ok' })
    expect(await get('http://worker.test/app/-/healthz')).toBe('app')
    expect(await get('http://worker.test/app?next=/-/healthz')).toBe('app')
  })

  it('hands a GET without a body to the app as it came', async () => {
    const request = new Request('http://worker.test/hello')
    await worker.fetch(request, {}, {})
    expect(received).toBe(request)
  })
})

describe('pathStartsWith()', () => {
  it('reads the path of an absolute URL, not its host or query', () => {
    expect(pathStartsWith('http://worker.test/-/metrics', '/-/')).toBe(true)
    expect(pathStartsWith('https://worker.test:8787/-/healthz?x=1', '/-/')).toBe(true)
    expect(pathStartsWith('http://worker.test/predict', '/-/')).toBe(false)
    expect(pathStartsWith('http://worker.test/predict?from=/-/', '/-/')).toBe(false)
    expect(pathStartsWith('http://worker.test', '/-/')).toBe(false)
  })
})
