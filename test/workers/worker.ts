/**
 * The Worker the workerd tests run: test deployments, each hosted in its
 * own Durable Object class, behind one Hono app.
 */
import { Hono } from 'hono'
import { batch, deployment, getHandle, ingress, replicaContext } from 'edgeserve'
import { durableObject, serveWorker } from 'edgeserve/workers'
import { BatchAdder } from '../../examples/adder/batch-adder.js'
import { oneReplicaTenants, tenantApp, tenants } from '../support/tenant-app.js'
import { itemPredictor, malformedItemApp, requestsPredictor } from '../support/malformed-item-app.js'
import { textGenerator as unpacedGenerator } from '../../examples/text-generator/generator.js'
import { overloadApp } from './overload-app.js'
import { sharedBatchApp } from './shared-batch-app.js'
import { disconnectApp, held } from './disconnect-app.js'
import { coalescingApp, tail } from './coalescing-app.js'
import { burstBarrier } from './burst-barrier.js'

/** The seed adder, slowed so that concurrent requests meet in the queue. */
const adder = deployment(BatchAdder, { name: 'SeedAdder' }).bind({ workMs: 40 })

/** Records every batch it runs, so a test can observe batching inside the object. */
class RecordingAdder {
  readonly replica = replicaContext().replica
  private readonly batches: number[][] = []

  handle = batch(
    async (xs: number[]) => {
      this.batches.push(xs)
      await new Promise((resolve) => setTimeout(resolve, 40))
      return xs.map((x) => x + 1)
    },
    { maxBatchSize: 4 },
  )

  async fetch(request: Request) {
    const x = Number(new URL(request.url).searchParams.get('x'))
    return { result: await this.handle(x), replica: this.replica }
  }

  seen() {
    return this.batches
  }

  _secret() {
    return 'never'
  }
}
const recorder = deployment(RecordingAdder, { name: 'Recorder', numReplicas: 2 })

/** The text generator, paced so that overlapping requests overlap whatever the machine's speed. */
const textGenerator = unpacedGenerator.bind('text-generation', 'char-lm', { stepDelayMs: 3 })

/** A slow deployment for eviction tests. */
class SlowResponder {
  async fetch(request: Request) {
    await new Promise((resolve) => setTimeout(resolve, Number(new URL(request.url).searchParams.get('ms') ?? 300)))
    return `done ${request.method}`
  }
}
const slow = deployment(SlowResponder, { name: 'Slow' })

/** Requests with `hold` wait here, per replica, until the test releases that replica (from its own object). */
const holds = new Map<number, Promise<void> & { release?: () => void }>()
function holdOf(replica: number): Promise<void> {
  let hold = holds.get(replica)
  if (!hold) {
    let release!: () => void
    hold = Object.assign(new Promise<void>((resolve) => (release = resolve)), { release })
    holds.set(replica, hold)
  }
  return hold
}

/** Autoscaled from zero: echoes each request's id through a batched method, with the replica that served it. */
class EchoReplica {
  readonly replica = replicaContext().replica
  echo = batch(
    async (ids: number[]) => {
      await new Promise((resolve) => setTimeout(resolve, 20))
      return ids
    },
    { maxBatchSize: 4 },
  )

  async fetch(request: Request) {
    const url = new URL(request.url)
    if (url.searchParams.has('hold')) {
      // A pending timer of its own: workerd cancels as hung a request that waits only on another request's doing.
      const alive = setTimeout(() => undefined, 60_000)
      await holdOf(this.replica)
      clearTimeout(alive)
    }
    return { id: await this.echo(Number(url.searchParams.get('id'))), replica: this.replica }
  }
}
const scaledEcho = deployment(EchoReplica, {
  name: 'ScaledEcho',
  autoscaling: { minReplicas: 0, maxReplicas: 3, targetOngoingRequests: 2, upscaleDelayS: 0.05, downscaleDelayS: 0.3, lookBackPeriodS: 0.2 },
})

/** Reads its body with request.json() and answers with Response.json(), as users write it. */
class Doubler {
  async fetch(request: Request) {
    const { x } = (await request.json()) as { x: number }
    return Response.json({ doubled: x * 2 })
  }
}
const jsonDoubler = deployment(Doubler, { name: 'JsonDoubler' })

type Env = Record<string, unknown>

const app = new Hono<{ Bindings: Env }>()
  // Requests a test marks as one burst go on together once all have come (test/workers/burst-barrier.ts).
  .use(burstBarrier)
  .get('/adder', ingress(adder))
  .get('/recorder', ingress(recorder))
  .get('/slow', ingress(slow))
  .post('/slow', ingress(slow))
  // Test-only: observe and exercise replicas through handles and RPC from Worker code.
  .get('/recorder/seen', async (c) => {
    const handle = getHandle(recorder, c.env)
    return c.json(await handle.seen.remote())
  })
  .get('/recorder/call', async (c) => {
    const handle = getHandle(recorder, c.env) as unknown as Record<string, { remote(...args: unknown[]): Promise<unknown> }>
    try {
      return c.json({ value: await handle[c.req.query('method') ?? '']!.remote(Number(c.req.query('x') ?? 0)) })
    } catch (error) {
      return c.json({ error: (error as Error).message, status: (error as { status?: number }).status }, 200)
    }
  })
  .get('/generate', ingress(textGenerator))
  .get('/generate/stream', ingress(textGenerator))
  // A stream through a handle: NDJSON over Durable Object RPC, read here,
  // stopping after `take` tokens when asked (which must free the slot).
  .get('/generate/handle', async (c) => {
    const take = Number(c.req.query('take') ?? Infinity)
    const tokens: string[] = []
    for await (const token of getHandle(textGenerator, c.env).stream.remote(c.req.query('text') ?? '', Number(c.req.query('maxTokens')))) {
      tokens.push(token)
      if (tokens.length >= take) break
    }
    return c.json(tokens)
  })
  .get('/scaled', ingress(scaledEcho))
  .post('/double', ingress(jsonDoubler))
  // Test-only: what each replica's object received, and releasing its held requests.
  .get('/scaled/arrived', async (c) => {
    const namespace = c.env.ScaledEcho as { idFromName(n: string): unknown; get(id: unknown): { arrivedForTest(): Promise<number[]> } }
    return c.json(await namespace.get(namespace.idFromName(`ScaledEcho/${c.req.query('replica')}`)).arrivedForTest())
  })
  .get('/scaled/release', async (c) => {
    const namespace = c.env.ScaledEcho as { idFromName(n: string): unknown; get(id: unknown): { releaseForTest(): Promise<void> } }
    await namespace.get(namespace.idFromName(`ScaledEcho/${c.req.query('replica')}`)).releaseForTest()
    return c.text('released')
  })
  // Test-only: how many cheap full batches start before a timer set first
  // fires. Deployed, a Worker's clock stands still while code runs, so a
  // count, not the turn's time budget, must make the chain give the event
  // loop its turn (local workerd's clock moves, but these batches take far
  // less than the budget, so the count is what ends the turn here too).
  .get('/loop-turn', async (c) => {
    const started: number[] = []
    const echo = batch(async (xs: number[]) => (started.push(xs[0]!), xs), { maxBatchSize: 1 })
    let beforeTimer: number | undefined
    setTimeout(() => (beforeTimer = started.length), 0)
    const calls = Number(c.req.query('calls') ?? 40)
    await Promise.all(Array.from({ length: calls }, (_, i) => echo(i)))
    return c.json({ started: started.length, beforeTimer: beforeTimer ?? started.length })
  })
  // Test-only: how far the clock moves over a stretch of code with no I/O (local workerd lets it move,
  // in whole milliseconds; deployed, it would not), and what an adaptive batch queue does here all the
  // same: allow maxBatchSize from the start, as it must where the clock stands still.
  .get('/clock', async (c) => {
    const before = performance.now()
    // The sum goes into the answer, so that the loop cannot be dropped as dead code.
    let sum = 0
    for (let i = 0; i < 20_000_000; i++) sum += Math.sqrt(i)
    const movedMs = performance.now() - before
    const sizes: number[] = []
    const echo = batch(async (xs: number[]) => (sizes.push(xs.length), xs), { maxBatchSize: 16, adaptive: true })
    await Promise.all(Array.from({ length: 32 }, (_, i) => echo(i)))
    return c.json({
      movedMs,
      wholeMs: Number.isInteger(before) && Number.isInteger(movedMs),
      work: sum > 0,
      sizes,
      limit: echo.stats().batchSizeLimit,
      curve: echo.costCurve(),
    })
  })
  .get('/slow/reset', async (c) => {
    const namespace = c.env.Slow as { idFromName(n: string): unknown; get(id: unknown): { resetForTest(r: string): Promise<void> } }
    await namespace
      .get(namespace.idFromName('Slow/0'))
      .resetForTest('reset by test')
      .catch(() => undefined)
    return c.text('reset')
  })

// The multiplexing suite's routes (test/support/tenant-app.ts), shared with the Node tests.
app.route('/', tenantApp)
// The "a malformed item fails alone" suite's routes (test/support/malformed-item-app.ts), shared with the Node tests.
app.route('/', malformedItemApp)
// Durable Objects that refuse as overloaded ones do (test/workers/overload-app.ts).
app.route('/', overloadApp)
// A batched function that the Worker's own requests share, outside any deployment (test/workers/shared-batch-app.ts).
app.route('/', sharedBatchApp)
// A deployment whose batches a test holds, to see what comes of a client that leaves while queued (test/workers/disconnect-app.ts).
app.route('/', disconnectApp)
// The same deployment with and without the Worker's calls carried together, and one whose requests a test holds (test/workers/coalescing-app.ts).
app.route('/', coalescingApp)

// TailItems is reached by handle only: named here, /-/metrics reports its objects.
export default serveWorker(app, { deployments: [tail] })
export const TenantModels = durableObject(tenants)
export const OneReplicaTenants = durableObject(oneReplicaTenants)
export const SeedAdder = durableObject(adder)
export const JsonDoubler = durableObject(jsonDoubler)
export const MalformedItemPredictor = durableObject(itemPredictor)
export const MalformedRequestsPredictor = durableObject(requestsPredictor)
export const Recorder = durableObject(recorder)
export { OverloadedAlone, OverloadedPair } from './overload-app.js'
export const HeldBatches = durableObject(held)
export { GatheredItems, AloneItems, HeldItems, QueuedItems, TailItems } from './coalescing-app.js'
/** Resets its object as an eviction would: a test hook, so it lives in the test Worker, not in edgeserve. */
export class Slow extends durableObject(slow) {
  async resetForTest(reason: string): Promise<void> {
    this.ctx.abort(reason)
  }
}
export const BatchTextGenerator = durableObject(textGenerator)
/** Records the id of every request its object receives, and releases its held requests: test hooks, so they live here. */
export class ScaledEcho extends durableObject(scaledEcho) {
  private readonly arrived: number[] = []

  override async fetch(request: Request): Promise<Response> {
    this.arrived.push(Number(new URL(request.url).searchParams.get('id')))
    return super.fetch(request)
  }

  // Requests the Worker carries together arrive here, not through fetch().
  override async carry(...args: Parameters<InstanceType<ReturnType<typeof durableObject>>['carry']>) {
    for (const item of args[0]) if (item.kind === 'request') this.arrived.push(Number(new URL(item.url).searchParams.get('id')))
    return super.carry(...args)
  }

  async arrivedForTest(): Promise<number[]> {
    return this.arrived
  }

  async releaseForTest(): Promise<void> {
    const replica = Number(this.ctx.id.name?.split('/')[1])
    holds.get(replica)?.release?.()
    holds.delete(replica)
  }
}
