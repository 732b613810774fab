/**
 * Autoscaling on Node, through a real server on a loopback port: replicas in
 * process here, on worker threads at the end. Delays are a fraction of a
 * second so the tests stay short; they wait for states, never for speed.
 */
import { Hono } from 'hono'
import { threadId } from 'node:worker_threads'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { batch, deployment, ingress, replicaContext } from '../../src/index.js'
import { getDeploymentHandle, serve, type RunningServer } from '../../src/runtime/node/index.js'
import { closedLoop, deploymentMetric, replicasNow, type LoadAnswer } from '../support/autoscaling.js'
import { deferred, type Deferred } from '../support/deferred.js'
import { waitFor } from '../support/wait-for.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const idOf = (request: Request) => Number(new URL(request.url).searchParams.get('id'))

/** Echoes each request's id through a batched method; records every id it served and every replica disposed. */
class Echo {
  static served: number[] = []
  static disposed: number[] = []
  readonly replica = replicaContext().replica

  echo = batch(
    async (ids: number[]) => {
      await sleep(20)
      Echo.served.push(...ids)
      return ids
    },
    { maxBatchSize: 4 },
  )

  async fetch(request: Request) {
    return { id: await this.echo(idOf(request)), replica: this.replica }
  }

  dispose() {
    Echo.disposed.push(this.replica)
  }
}

/** Counts its instances: each one is a cold start. */
class ColdStart {
  static constructed = 0
  static disposed = 0
  readonly replica = replicaContext().replica

  constructor() {
    ColdStart.constructed++
  }

  async fetch(request: Request) {
    return { id: idOf(request), replica: this.replica }
  }

  add(x: number) {
    return x + 1
  }

  async dispose() {
    await sleep(5)
    ColdStart.disposed++
  }
}

/** Holds each request until the test releases its id; records where each arrived. */
class Held {
  static gates = new Map<number, Deferred<void>>()
  static arrived: { id: number; replica: number }[] = []
  static disposed: number[] = []
  readonly replica = replicaContext().replica

  static gate(id: number): Deferred<void> {
    let gate = Held.gates.get(id)
    if (!gate) Held.gates.set(id, (gate = deferred()))
    return gate
  }

  async fetch(request: Request) {
    const id = idOf(request)
    Held.arrived.push({ id, replica: this.replica })
    await Held.gate(id).promise
    return { id, replica: this.replica }
  }

  dispose() {
    Held.disposed.push(this.replica)
  }
}

const echo = deployment(Echo, {
  autoscaling: { minReplicas: 1, maxReplicas: 3, targetOngoingRequests: 2, upscaleDelayS: 0.05, downscaleDelayS: 0.2, lookBackPeriodS: 0.2 },
})
const coldStart = deployment(ColdStart, {
  autoscaling: { minReplicas: 0, maxReplicas: 2, upscaleDelayS: 0.05, downscaleDelayS: 0.1, lookBackPeriodS: 0.1 },
})
// Scales up at once, down as soon as it can: the test steers it by holding and releasing requests.
const held = deployment(Held, {
  autoscaling: { minReplicas: 1, maxReplicas: 2, targetOngoingRequests: 3, upscaleDelayS: 0, downscaleDelayS: 0.05, lookBackPeriodS: 0.05 },
})

const app = new Hono().get('/echo', ingress(echo)).get('/cold', ingress(coldStart)).get('/held', ingress(held))

let server: RunningServer

beforeAll(async () => {
  server = await serve(app, { port: 0, name: 'autoscaling-test', handleSignals: false })
})

afterAll(async () => {
  await server?.close()
})

describe('autoscaling on Node, replicas in process', () => {
  it('scales up under load to maxReplicas and back to minReplicas when idle, losing and duplicating nothing', async () => {
    expect(await replicasNow(server.url, 'Echo')).toBe(1)
    let done = false
    const load = closedLoop(
      (id) => `${server.url}/echo?id=${id}`,
      12,
      () => done,
    )
    try {
      await waitFor(async () => (await replicasNow(server.url, 'Echo')) === 3, 'three replicas under load')
      // Keep the load on a little, so every replica serves while the count is at its maximum.
      const servedAtMax = Echo.served.length
      await waitFor(() => Echo.served.length >= servedAtMax + 60, 'more answers at three replicas')
    } finally {
      done = true
    }
    const { sent, answers } = await load

    // Every request answered once, with its own id; the replicas served each id once.
    expect(answers).toHaveLength(sent)
    expect(answers.filter((a) => a.status !== 200)).toEqual([])
    const bodies = answers.map((a) => JSON.parse(a.body) as { id: number; replica: number })
    expect(bodies.map((b) => b.id)).toEqual(answers.map((a) => a.id))
    expect(answers.map((a) => a.id).sort((a, b) => a - b)).toEqual(Array.from({ length: sent }, (_, i) => i))
    expect([...Echo.served].sort((a, b) => a - b)).toEqual(Array.from({ length: sent }, (_, i) => i))
    expect(new Set(bodies.map((b) => b.replica))).toEqual(new Set([0, 1, 2]))

    await waitFor(async () => (await replicasNow(server.url, 'Echo')) === 1, 'back to one replica when idle')
    await waitFor(() => Echo.disposed.includes(1) && Echo.disposed.includes(2), 'the removed replicas to be disposed of')
    expect(Echo.disposed).not.toContain(0)
    expect(await deploymentMetric(server.url, 'edgeserve_replicas', 'Echo')).toBe(1)
    const starts = await deploymentMetric(server.url, 'edgeserve_replica_starts_total', 'Echo')
    const stops = await deploymentMetric(server.url, 'edgeserve_replica_stops_total', 'Echo')
    expect(stops).toBeGreaterThanOrEqual(2)
    expect(starts! - stops!).toBe(1)
  })

  it('scales from zero: the first request waits for a cold start, HTTP and handle alike', async () => {
    expect(await replicasNow(server.url, 'ColdStart')).toBe(0)
    expect(ColdStart.constructed).toBe(0)
    const health = (await (await fetch(`${server.url}/-/healthz`)).json()) as { replicas: { deployment: string }[] }
    expect(health.replicas.filter((r) => r.deployment === 'ColdStart')).toEqual([])

    const first = await fetch(`${server.url}/cold?id=7`)
    expect(first.status).toBe(200)
    expect(await first.json()).toEqual({ id: 7, replica: 0 })
    expect(ColdStart.constructed).toBe(1)

    await waitFor(async () => (await replicasNow(server.url, 'ColdStart')) === 0, 'scaled back to zero')
    await waitFor(() => ColdStart.disposed === 1, 'the idle replica disposed of')

    const handle = getDeploymentHandle<ColdStart>('ColdStart', { app: 'autoscaling-test' })
    expect(await handle.add.remote(41)).toBe(42)
    expect(ColdStart.constructed).toBe(2)
    expect(await deploymentMetric(server.url, 'edgeserve_replica_starts_total', 'ColdStart')).toBe(2)
  })

  it('a replica being removed takes nothing new, answers what it holds, then is disposed of', async () => {
    const answers: Promise<Response>[] = []
    const send = async (id: number) => {
      answers.push(fetch(`${server.url}/held?id=${id}`))
      await waitFor(() => Held.arrived.some((a) => a.id === id), `request ${id} to arrive`)
      return Held.arrived.find((a) => a.id === id)!.replica
    }
    // One at a time: the fourth held request asks for a second replica (4 ongoing over a target of 3).
    for (const id of [0, 1, 2, 3]) expect(await send(id)).toBe(0)
    await waitFor(async () => (await replicasNow(server.url, 'Held')) === 2, 'a second replica')
    expect(await send(4)).toBe(1)

    // Replica 0's requests answered, one left on replica 1: one replica is enough now.
    for (const id of [0, 1, 2, 3]) Held.gate(id).resolve()
    await waitFor(async () => (await replicasNow(server.url, 'Held')) === 1, 'the count to drop while replica 1 holds a request')
    expect(await send(5)).toBe(0)
    expect(Held.disposed).toEqual([]) // replica 1 still holds request 4

    Held.gate(4).resolve()
    Held.gate(5).resolve()
    const bodies = await Promise.all(answers.map(async (r) => ((await (await r).json()) as { id: number }).id))
    expect(bodies).toEqual([0, 1, 2, 3, 4, 5])
    await waitFor(() => Held.disposed.length === 1, 'the drained replica disposed of')
    expect(Held.disposed).toEqual([1])
    expect(await deploymentMetric(server.url, 'edgeserve_replica_stops_total', 'Held')).toBe(1)
  })

  it('/-/routes shows the autoscaling config in force and the current count', async () => {
    const body = (await (await fetch(`${server.url}/-/routes`)).json()) as {
      deployments: { name: string; replicas: number; options: Record<string, unknown> }[]
    }
    const shown = body.deployments.find((d) => d.name === 'Echo')!
    expect(shown.options).toMatchObject({
      numReplicas: 'auto',
      autoscaling: {
        minReplicas: 1,
        maxReplicas: 3,
        initialReplicas: 1,
        targetOngoingRequests: 2,
        upscaleDelayS: 0.05,
        downscaleDelayS: 0.2,
        lookBackPeriodS: 0.2,
      },
    })
    expect(shown.replicas).toBe(1)
  })
})

describe('autoscaling on Node, replicas on worker threads', () => {
  it('starts threads from zero and under load, and ends them when idle', async () => {
    const { app: threadApp } = await import('./fixtures/thread-app.js')
    const threaded = await serve(threadApp, {
      port: 0,
      name: 'autoscaling-threads-test',
      handleSignals: false,
      threads: { module: new URL('./fixtures/thread-app.ts', import.meta.url), deployments: ['Scaled'] },
    })
    try {
      type Answer = { id: number; replica: number; threadId: number }
      expect(await replicasNow(threaded.url, 'Scaled')).toBe(0)
      const first = (await (await fetch(`${threaded.url}/scaled?id=-1`)).json()) as Answer
      expect(first).toMatchObject({ id: -1, replica: 0 })
      expect(first.threadId).not.toBe(threadId)

      let done = false
      const seen: LoadAnswer[] = []
      const load = closedLoop(
        (id) => `${threaded.url}/scaled?id=${id}`,
        6,
        () => done,
        seen,
      )
      try {
        await waitFor(async () => (await replicasNow(threaded.url, 'Scaled')) === 2, 'two thread replicas under load')
        // The count moves when the autoscaler decides; the new thread answers
        // its first request a little later. Stopping the load at once could
        // leave it nothing to serve: keep the load on until it has answered.
        const fromSecond = (a: LoadAnswer) => a.status === 200 && (JSON.parse(a.body) as Answer).replica === 1
        await waitFor(() => seen.some(fromSecond), 'an answer from the second thread replica')
      } finally {
        done = true
      }
      const { sent, answers } = await load
      expect(answers.filter((a) => a.status !== 200)).toEqual([])
      expect(answers.map((a) => (JSON.parse(a.body) as Answer).id).sort((a, b) => a - b)).toEqual(Array.from({ length: sent }, (_, i) => i))
      expect(new Set(answers.map((a) => (JSON.parse(a.body) as Answer).replica))).toEqual(new Set([0, 1]))
      const threadsUsed = new Set(answers.map((a) => (JSON.parse(a.body) as Answer).threadId))

      await waitFor(async () => (await replicasNow(threaded.url, 'Scaled')) === 0, 'scaled back to zero')
      const stopped = async () =>
        (await deploymentMetric(threaded.url, 'edgeserve_replica_stops_total', 'Scaled')) ===
        (await deploymentMetric(threaded.url, 'edgeserve_replica_starts_total', 'Scaled'))
      await waitFor(stopped, 'every started thread stopped')
      const health = (await (await fetch(`${threaded.url}/-/healthz`)).json()) as { replicas: { deployment: string }[] }
      expect(health.replicas.filter((r) => r.deployment === 'Scaled')).toEqual([])

      // The next request starts a fresh thread.
      const again = (await (await fetch(`${threaded.url}/scaled?id=-2`)).json()) as Answer
      expect(again.id).toBe(-2)
      expect(threadsUsed.has(again.threadId)).toBe(false)
    } finally {
      await threaded.close()
    }
  })
})
