/**
 * The web-standard body calls in a deployment served on Node: request.json()
 * and Response.json() work as on every runtime, and a body that is not JSON
 * gets a 400 JSON error, the client's mistake, not a 500.
 */
import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { batch, deployment, ingress } from '../../src/index.js'
import { serve, type RunningServer } from '../../src/runtime/node/index.js'

class Doubler {
  async fetch(request: Request) {
    const { x } = (await request.json()) as { x: number }
    return Response.json({ doubled: x * 2 })
  }
}

class BatchDoubler {
  double = batch(async (xs: number[]) => xs.map((x) => x * 2))

  async fetch(request: Request) {
    const { x } = (await request.json()) as { x: number }
    return { doubled: await this.double(x) }
  }
}

let server: RunningServer

beforeAll(async () => {
  const app = new Hono()
  app.post('/double', ingress(deployment(Doubler)))
  app.post('/batch-double', ingress(deployment(BatchDoubler)))
  server = await serve(app, { port: 0, name: 'request-json', handleSignals: false })
})
afterAll(() => server.close())

const post = (path: string, body: string) => fetch(`${server.url}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json' } })

describe('request.json() in a deployment on Node', () => {
  for (const path of ['/double', '/batch-double']) {
    it(`${path}: answers JSON bodies, and a body that is not JSON with a 400 JSON error`, async () => {
      const good = await post(path, '{"x":21}')
      expect([good.status, await good.json()]).toEqual([200, { doubled: 42 }])
      const bad = await post(path, '{"x":')
      expect([bad.status, bad.headers.get('content-type'), await bad.json()]).toEqual([
        400,
        'application/json; charset=utf-8',
        { error: { type: 'HTTPError', message: 'the request body is not valid JSON' } },
      ])
    })
  }
})
