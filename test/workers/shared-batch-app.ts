/**
 * A batched function at a Worker's module scope, outside any deployment, for
 * the workerd tests: what batch() does when a Worker's own requests share it.
 */
import { Hono } from 'hono'
import { batch } from 'edgeserve'

interface Item {
  x: number
  /** A URL whose answer the batch waits for: a test holds it back to keep the batch running. */
  gate?: string | undefined
}

/** Its batches run on the I/O of the request whose call started them: the gate's fetch is that request's. */
const addOne = batch(
  async (items: Item[]) => {
    for (const { gate } of items) if (gate !== undefined) await (await fetch(gate)).text()
    return items.map(({ x }) => x + 1)
  },
  { maxBatchSize: 8 },
)

const outcome = (call: Promise<number>) =>
  call.then(
    (value) => ({ value }),
    (error: Error) => ({ error: `${error.name}: ${error.message}` }),
  )

export const sharedBatchApp = new Hono()
  .get('/shared-batch', async (c) => c.json(await outcome(addOne({ x: Number(c.req.query('x')), gate: c.req.query('gate') }))))
  // Calls of one request, which share its I/O: they may share batches.
  .get('/shared-batch/many', async (c) => {
    const before = addOne.stats().batchesRun
    const xs = Array.from({ length: Number(c.req.query('n')) }, (_, i) => i)
    const outcomes = await Promise.all(xs.map((x) => outcome(addOne({ x }))))
    return c.json({ outcomes, batches: addOne.stats().batchesRun - before })
  })
