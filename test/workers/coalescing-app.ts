/**
 * Deployments for test/workers/coalescing.test.ts: what a Worker isolate
 * carries to a replica's Durable Object in one call must come back per item,
 * as each item would have alone.
 *
 * The same class is deployed twice: GatheredItems, with the Worker's calls
 * carried together (the default), and AloneItems with `coalesceCalls: false`,
 * one call per request as before, so a test can hold the one's answers
 * against the other's. HeldItems holds its requests until a test releases
 * them, and its object records which items each call carried, in order: the
 * first is the item of the request that sent the call.
 */
import { Hono } from 'hono'
import { batch, deployment, getHandle, HTTPError, ingress } from 'edgeserve'
import { stack } from 'edgeserve/onnx'
import { durableObject } from 'edgeserve/workers'
import { withResolvers, type Resolvers } from '../../src/batching/resolvers.js'

/** A pause with a pending timer of its own, as workerd asks of a request that waits. */
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * GET `?id=N` answers `{ id, squared }` with the status asked for
 * (`status`), its own `x-item` header and JSON content type; POST reads
 * `{ row: [a, b] }` and answers `{ id, sum }`, through stack(), so a row of
 * another length is a malformed item (422 alone). `waitMs` waits first (past
 * the deadline: 504), `fail` throws an HTTPError of that status, or, as
 * `fail=plain`, a plain Error.
 */
class Items {
  /** Each run of `sum`: its batch size, and whether stack() refused an item of it. */
  readonly #runs: { size: number; refused: boolean }[] = []

  sum = batch(
    async (rows: number[][]) => {
      let tensor
      try {
        tensor = stack(rows, [2])
      } catch (error) {
        this.#runs.push({ size: rows.length, refused: true })
        throw error
      }
      this.#runs.push({ size: rows.length, refused: false })
      const data = tensor.data as Float32Array
      return rows.map((_, i) => data[2 * i]! + data[2 * i + 1]!)
    },
    { maxBatchSize: 16, batchWaitTimeoutS: 0.002 },
  )

  square = batch(async (xs: number[]) => xs.map((x) => x * x), { maxBatchSize: 16, batchWaitTimeoutS: 0.002 })

  /** The runs of `sum` from the `from`th on. */
  sumRuns(from: number): { size: number; refused: boolean }[] {
    return this.#runs.slice(from)
  }

  /** An unbatched method. */
  label(x: number): string {
    return `item ${x}`
  }

  async fetch(request: Request) {
    const url = new URL(request.url)
    const id = Number(url.searchParams.get('id'))
    const waitMs = Number(url.searchParams.get('waitMs') ?? 0)
    if (waitMs > 0) await pause(waitMs)
    const fail = url.searchParams.get('fail')
    if (fail === 'plain') throw new Error(`item ${id} broke`)
    if (fail !== null) throw new HTTPError(Number(fail), `item ${id} failed with ${fail}`)
    if (request.method === 'GET') {
      const body = JSON.stringify({ id, squared: await this.square(id) })
      const status = Number(url.searchParams.get('status') ?? 200)
      return new Response(body, { status, headers: { 'content-type': 'application/json; charset=utf-8', 'x-item': String(id) } })
    }
    const { row } = (await request.json()) as { row: number[] }
    return { id, sum: await this.sum(row) }
  }
}

// A deadline long enough that no answer of a loaded two-core machine meets it by accident.
export const gathered = deployment(Items, { name: 'GatheredItems', requestTimeoutS: 2 })
export const alone = deployment(Items, { name: 'AloneItems', requestTimeoutS: 2, coalesceCalls: false })
/** Room for 8 requests at a time: the rest of a load wait in the Worker's router for one to finish. */
export const queued = deployment(Items, { name: 'QueuedItems', requestTimeoutS: 10, maxOngoingRequests: 8 })

/**
 * `double` batches at most 4 calls and waits up to 10 s to fill a batch:
 * ten calls carried in one call into its object run as 4, 4 and 2, and the
 * 2 must not wait out the 10 s (nor be claimed by calls of their own).
 */
class Tail {
  readonly #runs: number[] = []

  double = batch(
    async (xs: number[]) => {
      this.#runs.push(xs.length)
      return xs.map((x) => 2 * x)
    },
    { maxBatchSize: 4, batchWaitTimeoutS: 10 },
  )

  /** The sizes of `double`'s batches from the `from`th on. */
  runs(from: number): number[] {
    return this.#runs.slice(from)
  }
}

export const tail = deployment(Tail, { name: 'TailItems', requestTimeoutS: 30 })

/** Each round's gate, which its requests wait behind until the test opens it; round 0 has none. */
const gates = new Map<number, Resolvers<void>>()
const gateOf = (round: number) => {
  let gate = gates.get(round)
  if (!gate) gates.set(round, (gate = withResolvers<void>()))
  return gate
}

/** The ids of the held requests whose signal aborted in the object: their clients left. */
const left: number[] = []

/** GET `?id=N&round=R` waits until round R is released, then answers `{ id, round }`; one whose client leaves is counted in `left`. */
class Held {
  async fetch(request: Request) {
    const url = new URL(request.url)
    const id = Number(url.searchParams.get('id'))
    const round = Number(url.searchParams.get('round') ?? 0)
    if (round > 0) {
      // A pending timer of its own: workerd cancels as hung a request that waits only on another request's doing.
      const alive = setTimeout(() => undefined, 60_000)
      const { signal } = request
      const leaving = withResolvers<void>()
      const leave = () => leaving.resolve()
      signal.addEventListener('abort', leave, { once: true })
      try {
        await Promise.race([gateOf(round).promise, leaving.promise])
      } finally {
        clearTimeout(alive)
        signal.removeEventListener('abort', leave)
      }
      if (signal.aborted) {
        left.push(id)
        throw signal.reason
      }
    }
    return { id, round }
  }
}

export const held = deployment(Held, { name: 'HeldItems' })

/** Records the ids each carried call brought, in order, and opens a round's gate: test hooks, so they live here. */
export class HeldItems extends durableObject(held) {
  private readonly carried: number[][] = []

  override async carry(...args: Parameters<InstanceType<ReturnType<typeof durableObject>>['carry']>) {
    this.carried.push(args[0].map((item) => (item.kind === 'request' ? Number(new URL(item.url).searchParams.get('id')) : -1)))
    return super.carry(...args)
  }

  async carriedForTest(): Promise<{ carried: number[][]; left: number[] }> {
    return { carried: this.carried, left }
  }

  async releaseForTest(round: number): Promise<void> {
    gateOf(round).resolve()
  }
}

export const GatheredItems = durableObject(gathered)
export const AloneItems = durableObject(alone)
export const QueuedItems = durableObject(queued)
export const TailItems = durableObject(tail)

interface HeldStub {
  carriedForTest(): Promise<{ carried: number[][]; left: number[] }>
  releaseForTest(round: number): Promise<void>
}
const heldObject = (env: Record<string, unknown>) => {
  const namespace = env.HeldItems as { idFromName(name: string): unknown; get(id: unknown): HeldStub }
  return namespace.get(namespace.idFromName('HeldItems/0'))
}

const handleOf = (env: Record<string, unknown>, which: string | undefined) => getHandle(which === 'alone' ? alone : gathered, env)

export const coalescingApp = new Hono<{ Bindings: Record<string, unknown> }>()
  .on(['GET', 'POST'], '/coalescing/gathered', ingress(gathered))
  .on(['GET', 'POST'], '/coalescing/alone', ingress(alone))
  .on(['GET', 'POST'], '/coalescing/queued', ingress(queued))
  // `n` handle calls of each method at once, from this one request: `?n=8&to=gathered|alone`.
  .get('/coalescing/calls', async (c) => {
    const handle = handleOf(c.env, c.req.query('to'))
    const xs = Array.from({ length: Number(c.req.query('n') ?? 8) }, (_, i) => i)
    const [squares, labels] = await Promise.all([Promise.all(xs.map((x) => handle.square.remote(x))), Promise.all(xs.map((x) => handle.label.remote(x)))])
    return c.json({ squares, labels })
  })
  // `n` calls of Tail's `double` at once, from this one request, and the sizes of the batches they ran in.
  .get('/coalescing/tail', async (c) => {
    const handle = getHandle(tail, c.env)
    const before = (await handle.runs.remote(0)).length
    const doubled = await Promise.all(Array.from({ length: Number(c.req.query('n') ?? 10) }, (_, i) => handle.double.remote(i)))
    return c.json({ doubled, runs: await handle.runs.remote(before) })
  })
  // Test-only: the runs of `sum` from the `from`th on.
  .get('/coalescing/sum-runs', async (c) => c.json(await handleOf(c.env, c.req.query('to')).sumRuns.remote(Number(c.req.query('from') ?? 0))))
  .get('/coalescing/held', ingress(held))
  // Test-only: what HeldItems's object was carried, and opening a round.
  .get('/coalescing/held/carried', async (c) => c.json(await heldObject(c.env).carriedForTest()))
  .post('/coalescing/held/release', async (c) => {
    await heldObject(c.env).releaseForTest(Number(c.req.query('round')))
    return c.json({ released: true })
  })
