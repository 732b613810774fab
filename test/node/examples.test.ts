import { Hono } from 'hono'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deployment, getHandle, HTTPError, ingress } from '../../src/index.js'
import { getDeploymentHandle, serve, type RunningServer } from '../../src/runtime/node/index.js'
import { app as demo } from '../../examples/demo/app.js'
import type { OriginAwareAdder } from '../../examples/adder-origin/origin-adder.js'
import type { BatchTextGenerator } from '../../examples/text-generator/generator.js'
import { vi } from 'vitest'

/** Ray's batching_config shape: `batching` batches whole fetch() calls; fetch gets Request[]. */
class EchoBatch {
  sizes: number[] = []
  async fetch(requests: Request[]): Promise<Response[]> {
    this.sizes.push(requests.length)
    await new Promise((resolve) => setTimeout(resolve, 30))
    return requests.map((r) => Response.json({ path: new URL(r.url).searchParams.get('i'), batch: requests.length }))
  }
  seen() {
    return this.sizes
  }
}

/** Batched whole requests whose answers are plain values, one of each kind, and one that cannot be sent as JSON. */
class MixedBatch {
  sizes: number[] = []
  async fetch(requests: Request[]): Promise<unknown[]> {
    this.sizes.push(requests.length)
    return requests.map((r) => {
      const kind = new URL(r.url).searchParams.get('kind')
      if (kind === 'text') return 'text'
      if (kind === 'json') return { kind }
      if (kind === 'error') return new HTTPError(418, 'a teapot')
      return { big: 1n } // JSON.stringify throws for a BigInt
    })
  }
  seen() {
    return this.sizes
  }
}

let server: RunningServer
let demoServer: RunningServer
beforeAll(async () => {
  vi.spyOn(console, 'log').mockImplementation(() => undefined)
  const echo = deployment(EchoBatch, { batching: { maxBatchSize: 4, batchWaitTimeoutS: 0.05 } })
  const mixed = deployment(MixedBatch, { batching: { maxBatchSize: 4, batchWaitTimeoutS: 0.5 } })
  server = await serve(new Hono().get('/echo', ingress(echo)).get('/mixed', ingress(mixed)), { port: 0, name: 'echo-app', handleSignals: false })
  demoServer = await serve(demo, { port: 0, name: 'demo', handleSignals: false })
})
afterAll(async () => {
  await server.close()
  await demoServer.close()
  vi.restoreAllMocks()
})

describe("deployment-level batching (Ray's batching_config)", () => {
  it('hands whole requests to fetch in batches of at most maxBatchSize', async () => {
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => fetch(`${server.url}/echo?i=${i}`).then((r) => r.json() as Promise<{ path: string; batch: number }>)),
    )
    expect(answers.map((a) => a.path)).toEqual(Array.from({ length: 10 }, (_, i) => String(i)))
    const sizes = await getDeploymentHandle<EchoBatch>('EchoBatch', { app: 'echo-app' }).seen.remote()
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(10)
    expect(Math.max(...sizes)).toBe(4)
  })

  it('answers each request of a batch with its own answer: an unsendable one fails alone', async () => {
    const kinds = ['text', 'json', 'error', 'bigint']
    const answers = await Promise.all(
      kinds.map(async (kind) => {
        const response = await fetch(`${server.url}/mixed?kind=${kind}`)
        return { status: response.status, type: response.headers.get('content-type'), body: await response.text() }
      }),
    )
    expect(await getDeploymentHandle<MixedBatch>('MixedBatch', { app: 'echo-app' }).seen.remote()).toEqual([4])
    expect(answers[0]).toEqual({ status: 200, type: 'text/plain; charset=utf-8', body: 'text' })
    expect(answers[1]).toEqual({ status: 200, type: 'application/json', body: '{"kind":"json"}' })
    expect(answers[2]!.status).toBe(418)
    expect(JSON.parse(answers[2]!.body)).toEqual({ error: { type: 'HTTPError', message: 'a teapot' } })
    expect(answers[3]!.status).toBe(500)
    expect(JSON.parse(answers[3]!.body)).toMatchObject({ error: { message: 'an internal error occurred while handling this request' } })
  })
})

describe('the text generator tutorial in-process: getDeploymentHandle by deployment and app name', () => {
  it("finds BatchTextGenerator in app 'Text-Completion-App'", async () => {
    const { app: textApp } = await import('../../examples/text-generator/app.js')
    const text = await serve(textApp, { port: 0, name: 'Text-Completion-App', handleSignals: false })
    try {
      const handle = getDeploymentHandle<BatchTextGenerator>('BatchTextGenerator', { app: 'Text-Completion-App' })
      const responses = ['Once upon a time,', 'Hi my name is Lewis and I like to'].map((t) => handle.handleBatch.remote(t, 10))
      const results = await Promise.all(responses.map((r) => r.result({ timeoutS: 10 })))
      expect(results.map((r) => r.length)).toEqual([10, 10])
      expect(await (await fetch(`${text.url}/?text=${encodeURIComponent('Once upon a time,')}&maxTokens=10`)).text()).toBe(results[0])
    } finally {
      await text.close()
    }
  })
})

describe('adder-origin: HTTP and handle calls never share a batch', () => {
  it('keeps origins apart under mixed concurrent load, and the handler knows the origin', async () => {
    const http = Array.from({ length: 12 }, (_, i) => fetch(`${demoServer.url}/adder-origin?number=${i}`).then((r) => r.text()))
    const viaHandle = Array.from({ length: 12 }, (_, i) => fetch(`${demoServer.url}/adder-origin/handle?number=${100 + i}`).then((r) => r.text()))
    const handle = getDeploymentHandle<OriginAwareAdder>('OriginAwareAdder', { app: 'demo' })
    const direct = Array.from({ length: 6 }, (_, i) => handle.handleBatch.remote(200 + i))
    expect((await Promise.all(http)).map(Number)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1))
    expect((await Promise.all(viaHandle)).map(Number)).toEqual(Array.from({ length: 12 }, (_, i) => 101 + i))
    expect(await Promise.all(direct)).toEqual(Array.from({ length: 6 }, (_, i) => 201 + i))
    const batches = await handle.batches.remote()
    const byOrigin = (origin: string) => batches.filter((b) => b.origin === origin).reduce((n, b) => n + b.size, 0)
    expect(new Set(batches.map((b) => b.origin))).toEqual(new Set(['http', 'handle']))
    expect(byOrigin('http')).toBe(12)
    expect(byOrigin('handle')).toBe(12 + 6)
    expect(batches.some((b) => b.size > 1)).toBe(true)
  })

  it('getHandle works from inside a route with the app env', async () => {
    const response = await fetch(`${demoServer.url}/adder-origin/handle?number=41`)
    expect(await response.text()).toBe('42')
    expect(typeof getHandle).toBe('function')
  })
})

describe('the autoscaled adder (examples/autoscaling)', () => {
  it('runs no replica until the first request, which starts one and gets its answer', async () => {
    const routes = async () =>
      ((await (await fetch(`${demoServer.url}/-/routes`)).json()) as { deployments: { name: string; replicas: number }[] }).deployments.find(
        (d) => d.name === 'ScaledAdder',
      )!.replicas
    expect(await routes()).toBe(0)
    expect(await (await fetch(`${demoServer.url}/adder/autoscaled?number=41`)).text()).toBe('42')
    expect(await routes()).toBe(1)
  })
})
