/**
 * Autoscaling on Workers, in real workerd (wrangler's dev engine): the
 * coordinator object keeps the count, the Worker's router follows it, and
 * replicas (Durable Objects) start from zero, scale up under several client
 * connections, and retire when idle, answering what they hold first.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { closedLoop, deploymentMetric, replicasNow } from '../support/autoscaling.js'
import { waitFor } from '../support/wait-for.js'
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

type Echoed = { id: number; replica: number }
const arrivedAt = async (replica: number) => (await (await fetch(`${base}/scaled/arrived?replica=${replica}`)).json()) as number[]
const settled = async () =>
  (await deploymentMetric(base, 'edgeserve_replica_starts_total', 'ScaledEcho'))! - (await deploymentMetric(base, 'edgeserve_replica_stops_total', 'ScaledEcho'))! ===
  (await replicasNow(base, 'ScaledEcho'))

describe('Workers: autoscaled Durable Objects', () => {
  it('scales from zero, up to maxReplicas under load, and back to zero, every request answered once', async () => {
    expect(await replicasNow(base, 'ScaledEcho')).toBe(0)
    const first = await fetch(`${base}/scaled?id=-1`)
    expect(first.status).toBe(200)
    expect(await first.json()).toEqual({ id: -1, replica: 0 })

    let done = false
    const load = closedLoop((id) => `${base}/scaled?id=${id}`, 12, () => done)
    try {
      await waitFor(async () => (await replicasNow(base, 'ScaledEcho')) === 3, 'three replicas under load', 15_000)
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

    await waitFor(async () => (await replicasNow(base, 'ScaledEcho')) === 0, 'back to zero when idle', 15_000)
    await waitFor(settled, 'every retired replica to stop', 15_000)
    expect(await deploymentMetric(base, 'edgeserve_replicas', 'ScaledEcho')).toBe(0)
    expect(await deploymentMetric(base, 'edgeserve_replica_stops_total', 'ScaledEcho')).toBeGreaterThanOrEqual(3)
  })

  it('a retired replica answers what it holds, and stops only then', async () => {
    const pending: Promise<Echoed>[] = []
    const send = async (id: number) => {
      pending.push(fetch(`${base}/scaled?hold&id=${id}`).then((r) => r.json() as Promise<Echoed>))
      const where = async () => {
        for (const replica of [0, 1, 2]) if ((await arrivedAt(replica)).includes(id)) return replica
        return -1
      }
      await waitFor(async () => (await where()) >= 0, `request ${id} to arrive`)
      return where()
    }
    const stopsBefore = (await deploymentMetric(base, 'edgeserve_replica_stops_total', 'ScaledEcho'))!
    // Six held requests from zero: one replica at first, then three are wanted (6 ongoing over a target of 2).
    for (const id of [100, 101, 102, 103, 104, 105]) await send(id)
    await waitFor(async () => (await replicasNow(base, 'ScaledEcho')) === 3, 'three replicas for the held requests', 15_000)
    // More held requests until one is on replica 2.
    let id = 106
    while ((await send(id++)) !== 2) if (id > 130) throw new Error('no request reached replica 2')

    // Release replicas 0 and 1: one request left, on replica 2; the count drops and replica 2 retires holding it.
    // A trickle of requests meanwhile: an isolate reports its load when it routes (see docs/architecture.md).
    await fetch(`${base}/scaled/release?replica=0`)
    await fetch(`${base}/scaled/release?replica=1`)
    let trickling = true
    const trickle = closedLoop((i) => `${base}/scaled?id=${1000 + i}`, 1, () => !trickling)
    try {
      await waitFor(async () => (await replicasNow(base, 'ScaledEcho')) === 1, 'the count to drop to one', 15_000)
      await waitFor(async () => (await deploymentMetric(base, 'edgeserve_replica_stops_total', 'ScaledEcho')) === stopsBefore + 1, 'replica 1 to stop')
    } finally {
      trickling = false
    }
    const trickled = await trickle
    expect(trickled.answers.filter((a) => a.status !== 200)).toEqual([])
    expect(trickled.answers).toHaveLength(trickled.sent)
    const next = (await (await fetch(`${base}/scaled?id=200`)).json()) as Echoed
    expect(next).toEqual({ id: 200, replica: 0 })

    await fetch(`${base}/scaled/release?replica=2`)
    const answers = await Promise.all(pending)
    expect(answers.map((a) => a.id)).toEqual(Array.from({ length: id - 100 }, (_, i) => 100 + i))
    expect(answers.at(-1)!.replica).toBe(2)
    await waitFor(async () => (await deploymentMetric(base, 'edgeserve_replica_stops_total', 'ScaledEcho')) === stopsBefore + 2, 'replica 2 to stop once it answered')
  })
})
