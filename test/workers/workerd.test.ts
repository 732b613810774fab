/**
 * The Cloudflare runtime in real workerd (wrangler's unstable_startWorker):
 * Worker isolate -> router -> Durable Object -> batch queue.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startWorker, type TestWorker } from '../support/workerd.js'

let worker: TestWorker | undefined
let base: string

beforeAll(async () => {
  worker = await startWorker(new URL('./wrangler.toml', import.meta.url))
  base = worker.url
})

afterAll(async () => {
  await worker?.dispose()
})

const get = (path: string, init?: RequestInit) => fetch(base + path, init)

describe('Workers: replicas as Durable Objects', () => {
  it('runs the seed scenario through Worker and Durable Object: 1..9, batches of at most 4', async () => {
    const results = await Promise.all(Array.from({ length: 9 }, (_, i) => get(`/adder?number=${i}`).then((r) => r.text())))
    expect(results.map(Number)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9])
  })

  it('observes the batches inside the object: sizes at most 4, summing to the requests', async () => {
    const answers = await Promise.all(
      Array.from({ length: 16 }, (_, i) => get(`/recorder?x=${i}`).then((r) => r.json() as Promise<{ result: number; replica: number }>)),
    )
    expect(answers.map((a) => a.result)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1))
    // Both replicas of numReplicas: 2 took part.
    expect(new Set(answers.map((a) => a.replica))).toEqual(new Set([0, 1]))
    const seen = (await (await get('/recorder/seen')).json()) as number[][]
    expect(seen.every((b) => b.length <= 4)).toBe(true)
    expect(seen.some((b) => b.length > 1)).toBe(true) // requests from many isolates met in the object
  })

  it('serves handle calls over RPC, with the allow-list', async () => {
    const ok = (await (await get('/recorder/call?method=handle&x=41')).json()) as { value: number }
    expect(ok.value).toBe(42)
    for (const method of ['constructor', '_secret', '__proto__', 'toString', 'replica']) {
      const refused = (await (await get(`/recorder/call?method=${method}`)).json()) as { error: string; status: number }
      expect(refused.status, method).toBe(404)
      expect(refused.error).toMatch(/cannot be called through a handle/)
    }
  })

  it('retries an idempotent request once when its object is reset mid-request', async () => {
    const inFlight = get('/slow?ms=600')
    await new Promise((resolve) => setTimeout(resolve, 150))
    await get('/slow/reset')
    const response = await inFlight
    expect(response.status).toBe(200)
    expect(await response.text()).toBe('done GET')
  })

  it('answers a non-idempotent request cut by a reset with 503, and never hangs', async () => {
    const inFlight = get('/slow?ms=600', { method: 'POST' })
    await new Promise((resolve) => setTimeout(resolve, 150))
    await get('/slow/reset')
    const response = await inFlight
    expect(response.status).toBe(503)
    expect(response.headers.get('retry-after')).toBe('1')
    expect(await response.json()).toMatchObject({
      error: { type: 'ReplicaUnavailableError', message: expect.stringContaining('not idempotent') },
    })
    // The deployment serves again on a fresh object.
    expect(await (await get('/slow?ms=1', { method: 'POST' })).text()).toBe('done POST')
  })

  it('gathers metrics from every replica over RPC, and reports health', async () => {
    const metrics = await (await get('/-/metrics')).text()
    expect(metrics).toMatch(/edgeserve_batches_total\{deployment="Recorder",replica="0",method="handle"\} \d+/)
    expect(metrics).toMatch(/edgeserve_batches_total\{deployment="Recorder",replica="1",method="handle"\} \d+/)
    const health = await get('/-/healthz')
    expect(health.status).toBe(200)
  })

  it('answers /-/dashboard with 404 JSON when the Worker was not given the page', async () => {
    const response = await get('/-/dashboard')
    expect(response.status).toBe(404)
    expect(await response.json()).toMatchObject({ error: { type: 'HTTPError', message: expect.stringContaining("from 'edgeserve/dashboard'") } })
  })
})
