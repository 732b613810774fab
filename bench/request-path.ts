/**
 * Where a request's microseconds go inside the server process, without
 * HTTP: the bench app's routes called through `app.fetch` in this process,
 * 64 callers in a closed loop, and the request path's pieces alone. The
 * differences between the rows give the table in docs/benchmarks.md (route,
 * ingress and router, replica, batch queue). Prints one JSON line.
 */
import { getRequestListener } from '@hono/node-server'
import { Hono } from 'hono'
import { Replica } from '../src/deployment/replica.js'
import { ReplicaSet } from '../src/deployment/replica-set.js'
import { requestEnvClass } from '../src/runtime/node/http-server.js'
import { ingress } from '../src/index.js'
import { batchedNoOp, noOp, BatchedNoOp } from './apps/overhead.js'
import { median, quick } from './lib.js'

// As in the server: @hono/node-server's lighter Request and Response replace the global ones.
getRequestListener(() => new Response(null))

const CALLERS = 64
const PER_CALLER = quick ? 1_000 : 8_000
const REPEATS = quick ? 3 : 9

const app = new Hono()
  .get('/hello', (c) => c.text('ok'))
  .get('/noop', ingress(noOp))
  .get('/noop-batched', ingress(batchedNoOp))
const noOpSet = new ReplicaSet(noOp, [new Replica(noOp, 0)])
// The env serve() gives each request. The socket stands in for one kept-alive connection that never
// closes; its response reads as sent, so each request drops the one before from the connection's
// disconnect list, as on a real connection whose requests come one after another.
const RequestEnv = requestEnvClass({ NoOp: noOpSet, BatchedNoOp: new ReplicaSet(batchedNoOp, [new Replica(batchedNoOp, 0)]) })
const socket = { destroyed: false, once: () => socket }
const response = { closed: false, writableFinished: true, once: () => response }
type Node = ConstructorParameters<typeof RequestEnv>
const env = new RequestEnv({ headers: {}, socket } as unknown as Node[0], response as unknown as Node[1])
const request = (path: string) => new Request(`http://bench.local${path}`)

/** ns per call of `call`, 64 callers each awaiting its next call (caller i passes i). */
async function closedLoop(call: (caller: number) => unknown): Promise<number> {
  const t0 = process.hrtime.bigint()
  await Promise.all(
    Array.from({ length: CALLERS }, async (_, caller) => {
      for (let i = 0; i < PER_CALLER; i++) await call(caller)
    }),
  )
  return Number(process.hrtime.bigint() - t0) / (CALLERS * PER_CALLER)
}

// One request object per caller, reused: a GET's body is never read, and each has its own signal.
const perCaller = (path: string) => Array.from({ length: CALLERS }, () => request(path))
const hello = perCaller('/hello')
const noopRequests = perCaller('/noop')
const batchedRequests = perCaller('/noop-batched')
const replica = noOpSet.replicas[0]!
const { router } = noOpSet
const echo = new BatchedNoOp().echo

const pieces: Record<string, (caller: number) => unknown> = {
  // The bare Hono route: routing, the handler, a text Response.
  hono: (caller) => app.fetch(hello[caller]!, env),
  // The same through ingress, router and an in-process replica of a class that does nothing.
  deployment: (caller) => app.fetch(noopRequests[caller]!, env),
  // ... and through a batched method that does nothing.
  batchedDeployment: (caller) => app.fetch(batchedRequests[caller]!, env),
  // The router alone: take a replica and give it back.
  router: () => router.release(router.tryAcquire()),
  // The replica alone: Replica.fetch of the no-op class, its Response and metrics.
  replica: (caller) => replica.fetch(noopRequests[caller]!, {}),
  // The batch queue alone: one call of a no-op batched function.
  batchQueue: () => echo(1),
}

// Each route must answer 200 here: an error path measured by mistake (a stand-in the ingress
// cannot read, say) would pass for a slow request path.
for (const [name, path] of [
  ['hono', '/hello'],
  ['deployment', '/noop'],
  ['batchedDeployment', '/noop-batched'],
] as const) {
  const answer = await app.fetch(request(path), env)
  if (answer.status !== 200) throw new Error(`${name} (${path}) answered ${answer.status}: ${await answer.text()}`)
}

const samples = new Map<string, number[]>(Object.keys(pieces).map((name) => [name, []]))
// Interleaved, so drift (GC, tier-up) hits every piece alike; the first rounds warm up.
for (let round = 0; round < REPEATS + 2; round++) {
  for (const [name, call] of Object.entries(pieces)) {
    const ns = await closedLoop(call)
    if (round >= 2) samples.get(name)!.push(ns)
  }
}
const us = Object.fromEntries([...samples].map(([name, ns]) => [name, median(ns) / 1000]))
console.log(JSON.stringify({ callers: CALLERS, perCaller: PER_CALLER, repeats: REPEATS, microsecondsPerRequest: us }))
