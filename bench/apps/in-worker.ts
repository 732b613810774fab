/**
 * Each example model run in the Worker's own isolate, once per request: no
 * Durable Object, no hop, no batching, and none of edgeserve's serving path,
 * called from plain Hono routes. Their rows are the most a route that runs
 * the model can serve on workerd without batching, beside the deployments
 * that batch it in an object.
 *
 * - `/predict-in-worker`: the house-price MLP, the same unbatched class the
 *   `mlp-unbatched` deployment serves. Its run at batch 1 costs less than
 *   the hop into an object.
 * - `/ocr-in-worker`: the OCR direction classifier, with the deployment's own
 *   reading, decode and resize of the posted image (readLine) and its run
 *   (classifyLines), on one line at a time.
 *
 * Workers only: on Node every deployment already runs in the process.
 */
import type { Hono } from 'hono'
import { MlpUnbatched } from './app.js'
import { classifyLines, modelBytes as ocrBytes, readLine } from '../../examples/ocr-direction/classifier.js'
import { lazyModel } from '../../examples/shared/lazy-model.js'

export function inWorkerRoutes(app: Hono): void {
  // Made on first use, so that the models load with the first request (Workers cap start-up at one second).
  let model: MlpUnbatched | undefined
  app.post('/predict-in-worker', async (c) => c.json(await (model ??= new MlpUnbatched()).fetch(c.req.raw)))
  const ocr = lazyModel(ocrBytes)
  app.post('/ocr-in-worker', async (c) => {
    const line = await readLine(c.req.raw)
    const [direction] = await classifyLines(await ocr(), [line])
    return c.json(direction!)
  })
}
