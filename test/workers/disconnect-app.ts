/**
 * A deployment whose batches a test holds, for test/workers/unruly-clients.test.ts:
 * what comes of a request whose client goes away while it waits in the
 * object's batch queue.
 */
import { Hono } from 'hono'
import { batch, deployment, getHandle, ingress } from 'edgeserve'

class HeldBatches {
  /** The ids of each batch that ran, in order. */
  readonly #ran: number[][] = []
  readonly #open: Promise<void>
  #release!: () => void

  constructor() {
    this.#open = new Promise((resolve) => (this.#release = resolve))
  }

  /** Every batch waits until the test releases them: later calls queue behind the first. */
  run = batch(
    async (ids: number[]) => {
      this.#ran.push(ids)
      await this.#open
      return ids
    },
    { maxBatchSize: 4, batchWaitTimeoutS: 0 },
  )

  async fetch(request: Request) {
    // A pending timer of its own: workerd cancels as hung a request that waits only on another request's doing.
    const alive = setTimeout(() => undefined, 60_000)
    try {
      return { id: await this.run(Number(new URL(request.url).searchParams.get('id'))) }
    } finally {
      clearTimeout(alive)
    }
  }

  queued() {
    return this.run.stats().queueLength
  }

  ran() {
    return this.#ran
  }

  release() {
    this.#release()
  }
}

export const held = deployment(HeldBatches, { name: 'HeldBatches' })

export const disconnectApp = new Hono<{ Bindings: Record<string, unknown> }>()
  .get('/held', ingress(held))
  // Test-only: the object's queue, its batches, and letting them finish, through handles.
  .get('/held/queued', async (c) => c.json(await getHandle(held, c.env).queued.remote()))
  .get('/held/ran', async (c) => c.json(await getHandle(held, c.env).ran.remote()))
  .post('/held/release', async (c) => {
    await getHandle(held, c.env).release.remote()
    return c.json({ released: true })
  })
