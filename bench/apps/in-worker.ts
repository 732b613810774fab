/**
 * The house-price model run in the Worker's own isolate, once per request:
 * no Durable Object, no hop, no batching, and none of edgeserve's serving
 * path (the same unbatched class the `mlp-unbatched` deployment serves,
 * called from a plain Hono route). Its row is the most a route that runs
 * this model can serve on workerd, and shows what the object's hop costs a
 * model whose run at batch 1 costs less than the hop.
 *
 * Workers only: on Node every deployment already runs in the process.
 */
import type { Hono } from 'hono'
import { MlpUnbatched } from './app.js'

export function inWorkerRoute(app: Hono): void {
  // Made on first use, so that the model loads with the first request (Workers cap start-up at one second).
  let model: MlpUnbatched | undefined
  app.post('/predict-in-worker', async (c) => c.json(await (model ??= new MlpUnbatched()).fetch(c.req.raw)))
}
