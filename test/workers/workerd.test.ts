/**
 * The Cloudflare runtime in real workerd (wrangler's unstable_startWorker):
 * Worker isolate -> router -> Durable Object -> batch queue.
 */
import { once } from 'node:events'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it, onTestFinished } from 'vitest'
import { workerForTests } from '../support/workerd.js'
import { closedLoop, deploymentMetric, replicasNow } from '../support/autoscaling.js'
import { waitFor } from '../support/wait-for.js'
import { deferred } from '../support/deferred.js'
import { describeMultiplexing } from '../support/multiplexing-suite.js'
import { MAX_BATCHES_PER_TURN } from '../../src/batching/scheduler.js'

const worker = workerForTests(new URL('./wrangler.toml', import.meta.url))

const get = (path: string, init?: RequestInit) => fetch(worker.url + path, init)

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

  it('a chain of cheap batches gives the event loop its turn after a bounded count, as deployed Workers need (their clock stands still)', async () => {
    const { started, beforeTimer } = (await (await get(`/loop-turn?calls=${MAX_BATCHES_PER_TURN * 3}`)).json()) as {
      started: number
      beforeTimer: number
    }
    expect(started).toBe(MAX_BATCHES_PER_TURN * 3)
    expect(beforeTimer).toBeGreaterThanOrEqual(1)
    expect(beforeTimer).toBeLessThanOrEqual(MAX_BATCHES_PER_TURN)
  })

  it("adaptive batching allows maxBatchSize from the start, though local workerd's clock moves (in whole milliseconds)", async () => {
    const clock = (await (await get('/clock')).json()) as { movedMs: number; wholeMs: boolean; sizes: number[]; limit: number; curve: unknown[] }
    // What the docs and the bench say of local workerd's clock: it moves while code runs, by whole milliseconds.
    expect(clock.movedMs).toBeGreaterThan(0)
    expect(clock.wholeMs).toBe(true)
    // Deployed, the clock stands still, so Workers never learn a size: 32 calls run as two full batches
    // (elsewhere adaptive starts at one and climbs), and no cost is reported.
    expect(clock.sizes).toEqual([16, 16])
    expect(clock.limit).toBe(16)
    expect(clock.curve).toEqual([])
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

  it('after a reset, retries each idempotent request of a gathered call once and answers each other 503, per request', async () => {
    // A warm object first: a cold one may take longer than the 150 ms below to start, and then the reset comes first.
    expect(await (await get('/slow?ms=1')).text()).toBe('done GET')
    // Sent together, so the Worker carries them in one call (or a few): the reset ends the call for all of them.
    const inFlight = [get('/slow?ms=600'), get('/slow?ms=600', { method: 'POST' }), get('/slow?ms=600'), get('/slow?ms=600', { method: 'POST' })]
    await new Promise((resolve) => setTimeout(resolve, 150))
    await get('/slow/reset')
    const answers = await Promise.all(inFlight.map(async (r) => [(await r).status, await (await r).text()]))
    const unavailable = [503, expect.stringMatching(/"type":"ReplicaUnavailableError".*not idempotent/)]
    expect(answers).toEqual([[200, 'done GET'], unavailable, [200, 'done GET'], unavailable])
  })

  it('gathers metrics from every replica over RPC, and reports health', async () => {
    const metrics = await (await get('/-/metrics')).text()
    expect(metrics).toMatch(/edgeserve_batches_total\{deployment="Recorder",replica="0",method="handle"\} \d+/)
    expect(metrics).toMatch(/edgeserve_batches_total\{deployment="Recorder",replica="1",method="handle"\} \d+/)
    const health = await get('/-/healthz')
    expect(health.status).toBe(200)
  })

  it('request.json() in a Durable Object: a body that is not JSON gets a 400 JSON error, not a 500', async () => {
    const post = (body: string) => get('/double', { method: 'POST', body, headers: { 'content-type': 'application/json' } })
    const good = await post('{"x":21}')
    expect([good.status, await good.json()]).toEqual([200, { doubled: 42 }])
    const bad = await post('{"x":')
    expect([bad.status, await bad.json()]).toEqual([400, { error: { type: 'HTTPError', message: 'the request body is not valid JSON' } }])
  })

  it('answers /-/dashboard with 404 JSON when the Worker was not given the page', async () => {
    const response = await get('/-/dashboard')
    expect(response.status).toBe(404)
    expect(await response.json()).toMatchObject({ error: { type: 'HTTPError', message: expect.stringContaining("from 'edgeserve/dashboard'") } })
  })
})

describe("Workers: a batched function that the Worker's own requests share, outside any deployment", () => {
  it("refuses a second request's call while it holds another's, saying where to batch; the first is answered, and so is the next request", async () => {
    const gate = await heldGate()
    const first = get(`/shared-batch?x=1&gate=${encodeURIComponent(gate.url)}`).then((r) => r.json())
    await gate.reached // the first request's batch is running, on that request's I/O
    // Left to join, this call would wait on a batch that runs on another request's I/O.
    expect(await (await get('/shared-batch?x=2')).json()).toEqual({
      error: expect.stringMatching(/^TypeError: this batched function is busy with another request's calls.*batch inside a deployment/),
    })
    gate.open()
    expect(await first).toEqual({ value: 2 })
    // Nothing of the first request is left holding the function: the next request's call runs.
    expect(await (await get('/shared-batch?x=3')).json()).toEqual({ value: 4 })
  })

  it('gathers the calls of one request into one batch', async () => {
    const { outcomes, batches } = (await (await get('/shared-batch/many?n=5')).json()) as { outcomes: unknown[]; batches: number }
    expect(outcomes).toEqual([1, 2, 3, 4, 5].map((value) => ({ value })))
    expect(batches).toBe(1)
  })
})

/** A loopback URL whose first request is held unanswered until `open()`; `reached` resolves when it arrives. */
async function heldGate(): Promise<{ url: string; reached: Promise<void>; open(): void }> {
  const arrived = deferred<ServerResponse>()
  const server = createServer((_request, response) => arrived.resolve(response))
  // Closed with its held request, answered or not: a failed test must not wait on it.
  onTestFinished(() => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections())))
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/gate`,
    reached: arrived.promise.then(() => undefined),
    open: () => void arrived.promise.then((response) => response.end('open')),
  }
}

// --- autoscaling: the coordinator object keeps the count, the Worker's router follows it, and
// replicas start from zero, scale up under several client connections, and retire when idle,
// answering what they hold first.

type Echoed = { id: number; replica: number }
const arrivedAt = async (replica: number) => (await (await fetch(`${worker.url}/scaled/arrived?replica=${replica}`)).json()) as number[]
const settled = async () =>
  (await deploymentMetric(worker.url, 'edgeserve_replica_starts_total', 'ScaledEcho'))! -
    (await deploymentMetric(worker.url, 'edgeserve_replica_stops_total', 'ScaledEcho'))! ===
  (await replicasNow(worker.url, 'ScaledEcho'))

describe('Workers: autoscaled Durable Objects', () => {
  it('scales from zero, up to maxReplicas under load, and back to zero, every request answered once', async () => {
    expect(await replicasNow(worker.url, 'ScaledEcho')).toBe(0)
    const first = await fetch(`${worker.url}/scaled?id=-1`)
    expect(first.status).toBe(200)
    expect(await first.json()).toEqual({ id: -1, replica: 0 })

    let done = false
    const load = closedLoop(
      (id) => `${worker.url}/scaled?id=${id}`,
      12,
      () => done,
    )
    try {
      await waitFor(async () => (await replicasNow(worker.url, 'ScaledEcho')) === 3, 'three replicas under load', 15_000)
    } finally {
      done = true
    }
    const { sent, answers } = await load
    expect(answers.filter((a) => a.status !== 200)).toEqual([])
    const bodies = answers.map((a) => JSON.parse(a.body) as Echoed)
    expect(bodies.map((b) => b.id)).toEqual(answers.map((a) => a.id))
    const all = Array.from({ length: sent }, (_, i) => i)
    expect(answers.map((a) => a.id).sort((a, b) => a - b)).toEqual(all)
    // Each request reached one object once: what the objects received is what was sent.
    const received = (await Promise.all([0, 1, 2].map(arrivedAt))).flat().filter((id) => id >= 0)
    expect(received.sort((a, b) => a - b)).toEqual(all)

    await waitFor(async () => (await replicasNow(worker.url, 'ScaledEcho')) === 0, 'back to zero when idle', 15_000)
    await waitFor(settled, 'every retired replica to stop', 15_000)
    expect(await deploymentMetric(worker.url, 'edgeserve_replicas', 'ScaledEcho')).toBe(0)
    expect(await deploymentMetric(worker.url, 'edgeserve_replica_stops_total', 'ScaledEcho')).toBeGreaterThanOrEqual(3)
  })

  it('a retired replica answers what it holds, and stops only then', async () => {
    const pending: Promise<Echoed>[] = []
    const send = async (id: number) => {
      pending.push(fetch(`${worker.url}/scaled?hold&id=${id}`).then((r) => r.json() as Promise<Echoed>))
      const where = async () => {
        for (const replica of [0, 1, 2]) if ((await arrivedAt(replica)).includes(id)) return replica
        return -1
      }
      await waitFor(async () => (await where()) >= 0, `request ${id} to arrive`)
      return where()
    }
    // Six held requests from zero: one replica at first, then three are wanted (6 ongoing over a target of 2).
    for (const id of [100, 101, 102, 103, 104, 105]) await send(id)
    await waitFor(async () => (await replicasNow(worker.url, 'ScaledEcho')) === 3, 'three replicas for the held requests', 15_000)
    // Replica 2 may have come up while those were sent, and hold some of them: answer those, so that it holds
    // exactly one below. Two held there, plus the trickle, would be load enough for two replicas, not one.
    await fetch(`${worker.url}/scaled/release?replica=2`)
    // More held requests until one is on replica 2 (the count may dip meanwhile; they bring it back to three).
    let id = 106
    while ((await send(id++)) !== 2) if (id > 130) throw new Error('no request reached replica 2')
    await waitFor(async () => (await replicasNow(worker.url, 'ScaledEcho')) === 3, 'three replicas again', 15_000)
    await waitFor(settled, 'a replica retired in a dip to stop', 15_000)
    const stopsBefore = (await deploymentMetric(worker.url, 'edgeserve_replica_stops_total', 'ScaledEcho'))!

    // Release replicas 0 and 1: one request left, on replica 2; the count drops and replica 2 retires holding it.
    // A trickle of requests meanwhile: an isolate reports its load when it routes (see docs/architecture.md).
    await fetch(`${worker.url}/scaled/release?replica=0`)
    await fetch(`${worker.url}/scaled/release?replica=1`)
    let trickling = true
    const trickle = closedLoop(
      (i) => `${worker.url}/scaled?id=${1000 + i}`,
      1,
      () => !trickling,
    )
    try {
      await waitFor(async () => (await replicasNow(worker.url, 'ScaledEcho')) === 1, 'the count to drop to one', 15_000)
      await waitFor(async () => (await deploymentMetric(worker.url, 'edgeserve_replica_stops_total', 'ScaledEcho')) === stopsBefore + 1, 'replica 1 to stop')
    } finally {
      trickling = false
    }
    const trickled = await trickle
    expect(trickled.answers.filter((a) => a.status !== 200)).toEqual([])
    expect(trickled.answers).toHaveLength(trickled.sent)
    const next = (await (await fetch(`${worker.url}/scaled?id=200`)).json()) as Echoed
    expect(next).toEqual({ id: 200, replica: 0 })

    await fetch(`${worker.url}/scaled/release?replica=2`)
    const answers = await Promise.all(pending)
    expect(answers.map((a) => a.id)).toEqual(Array.from({ length: id - 100 }, (_, i) => 100 + i))
    expect(answers.at(-1)!.replica).toBe(2)
    await waitFor(
      async () => (await deploymentMetric(worker.url, 'edgeserve_replica_stops_total', 'ScaledEcho')) === stopsBefore + 2,
      'replica 2 to stop once it answered',
    )
  })
})

// Multiplexing: the model id crosses Durable Object RPC, and every isolate's router ranks replicas alike.
describeMultiplexing('Workers (Durable Objects)', () => worker.url)
