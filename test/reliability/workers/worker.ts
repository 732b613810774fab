/**
 * The Worker the reliability suite runs in workerd (4-faults-workers.test.ts,
 * started with wrangler's unstable_startWorker): a slow batched deployment to
 * evict mid-batch, and routes that exercise handles and raw Durable Object RPC.
 */
import { Hono } from 'hono'
import { batch, deployment, getHandle, ingress } from 'edgeserve'
import { durableObject, serveWorker } from 'edgeserve/workers'

/** Batches of up to 8 that take 300 ms: long enough to be evicted in the middle. */
class SlowBatchAdder {
  handle = batch(
    async (xs: number[]) => {
      await new Promise((resolve) => setTimeout(resolve, 300))
      return xs.map((x) => x + 1)
    },
    { maxBatchSize: 8 },
  )

  async fetch(request: Request) {
    return String(await this.handle(Number(new URL(request.url).searchParams.get('x'))))
  }

  add(x: number) {
    return this.handle(x)
  }

  _secret() {
    return 'never'
  }
}
const slowBatch = deployment(SlowBatchAdder, { name: 'SlowBatch' })

/** One request at a time per replica: the rest wait in the Worker's router. */
class NarrowResponder {
  async fetch(request: Request) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    return new URL(request.url).searchParams.get('x') ?? ''
  }
}
const narrow = deployment(NarrowResponder, { name: 'Narrow', maxOngoingRequests: 1 })

type Stub = {
  resetForTest(reason: string): Promise<void>
  invoke(method: string, args: unknown[], meta?: unknown): Promise<unknown>
}
type Namespace = { idFromName(name: string): unknown; get(id: unknown): Stub }
type Env = { SlowBatch: Namespace } & Record<string, unknown>

const app = new Hono<{ Bindings: Env }>()
  .get('/slow-batch', ingress(slowBatch))
  .post('/slow-batch', ingress(slowBatch))
  .get('/narrow', ingress(narrow))
  // Evict the replica as the runtime would (test-only RPC of the Durable Object).
  .get('/reset', async (c) => {
    await c.env.SlowBatch.get(c.env.SlowBatch.idFromName('SlowBatch/0'))
      .resetForTest('evicted by the reliability suite')
      .catch(() => undefined)
    return c.text('reset')
  })
  // A handle call by method name, as a route of the app might make one.
  .get('/call', async (c) => {
    const handle = getHandle(slowBatch, c.env) as unknown as Record<string, { remote(...args: unknown[]): Promise<unknown> }>
    try {
      return c.json({ value: await handle[c.req.query('method') ?? '']!.remote(Number(c.req.query('x') ?? 0)) })
    } catch (error) {
      const e = error as { type?: string; message?: string; status?: number }
      return c.json({ error: { type: e.type ?? 'Error', message: e.message ?? String(error) }, status: e.status ?? 500 })
    }
  })
  // Raw Durable Object RPC, past the handle: the object's own invoke() with any method name.
  .get('/raw-invoke', async (c) => {
    const stub = c.env.SlowBatch.get(c.env.SlowBatch.idFromName('SlowBatch/0'))
    return c.json(await stub.invoke(c.req.query('method') ?? '', [Number(c.req.query('x') ?? 0)]))
  })

export default serveWorker(app)
/** Resets its object as an eviction would: a test hook, so it lives in the test Worker, not in edgeserve. */
export class SlowBatch extends durableObject(slowBatch) {
  async resetForTest(reason: string): Promise<void> {
    this.ctx.abort(reason)
  }
}
export const Narrow = durableObject(narrow)
