/**
 * The bench app, served on Node (bench/server.ts) and on workerd
 * (bench/worker.ts): the example deployments as configured, plus bench-only
 * unbatched twins and a bare route for the HTTP ceiling.
 *
 * BENCH_OCR_REPLICAS sets the batched OCR deployment's numReplicas (the
 * threads rows); the replica threads import this module and read the same
 * environment, so they build the same deployment.
 */
import { Hono } from 'hono'
import { HTTPError, deployment, ingress, readJson } from '../../src/index.js'
import { loadModel, stack, type Model } from 'edgeserve/onnx'
import { TextDirectionClassifier, ocrDirection } from '../../examples/ocr-direction/classifier.js'
import { prepareImages } from '../prepare-work.js'
import { housePrice, modelBytes as mlpBytes } from '../../examples/house-price/predictor.js'
import { INPUT_NAME, NUM_FEATURES, OUTPUT_NAME, parseFeatures } from '../../examples/house-price/features.js'
import { batchedNoOp, noOp } from './overhead.js'
import { jsonHelpers, jsonWeb } from './json-body.js'
import { batchSizeRoutes } from './batch-sizes.js'
import { isolateLimit } from './isolate-limit.js'

const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {}
const ocrReplicas = Number(env.BENCH_OCR_REPLICAS ?? 1)

/**
 * The OCR classifier without batching: the shipped class at maxBatchSize 1,
 * so one session.run per request, scheduled by the same queue. A twin that
 * called session.run from fetch() would also differ in how the event loop
 * turns between runs (see src/batching/scheduler.ts): on Node it accepts new
 * connections one run at a time, which is not what this ratio measures.
 *
 * One run at a time, as one session serves requests without batching: the
 * shipped class's batch per instance would let two single-image runs go side
 * by side on the two instances, and the ratio would then measure batch size
 * alone.
 */
export class OcrUnbatched extends TextDirectionClassifier {
  constructor() {
    super()
    this.classify.setMaxBatchSize(1)
  }

  protected override batchesInFlight(): number {
    return 1
  }
}

/** The house-price MLP without batching: one session.run per request. */
export class MlpUnbatched {
  private model: Promise<Model> | undefined
  getModel() {
    return (this.model ??= mlpBytes().then((bytes) => loadModel(bytes)))
  }
  async fetch(request: Request) {
    const body = (await readJson(request, 16 * 1024)) as { features?: unknown }
    if (!body || typeof body !== 'object') throw new HTTPError(400, 'expected {"features": [...]}')
    const row = parseFeatures(body.features)
    const model = await this.getModel()
    const outputs = await model.run({ [INPUT_NAME]: stack([row], [NUM_FEATURES]) })
    return { prediction: (outputs[OUTPUT_NAME]!.data as Float32Array)[0] }
  }
}

export const ocrBatched = ocrReplicas === 1 ? ocrDirection : ocrDirection.withOptions({ numReplicas: ocrReplicas })
export const ocrUnbatched = deployment(OcrUnbatched, { name: 'OcrUnbatched' })
export const mlpUnbatched = deployment(MlpUnbatched, { name: 'MlpUnbatched' })
/** The house-price deployment as shipped has batchWaitTimeoutS 0.1; this twin dispatches what is queued at once. */
export const housePriceT0 = housePrice.withOptions({
  name: 'HousePriceT0',
  binding: 'HousePriceT0',
  batching: { maxBatchSize: 32, batchWaitTimeoutS: 0, strideS: 0, allowSmallBatch: true },
})

/**
 * The house-price deployment as shipped, its batching and all, but with one call into its object per
 * request (`coalesceCalls: false`): on Workers, what gathering an isolate's concurrent calls into one
 * call gives, and what it adds to a lone request. On Node the option changes nothing.
 */
export const housePriceSingleCalls = housePrice.withOptions({
  name: 'HousePriceSingleCalls',
  binding: 'HousePriceSingleCalls',
  coalesceCalls: false,
})
/** housePriceT0 with one call into its object per request: at c=1 against housePriceT0, what gathering adds to a lone request, with no batch wait to hide it. */
export const housePriceT0SingleCalls = housePriceT0.withOptions({
  name: 'HousePriceT0SingleCalls',
  binding: 'HousePriceT0SingleCalls',
  coalesceCalls: false,
})

export const app = new Hono()
// The adaptive examples at each fixed batch size (./batch-sizes.ts).
batchSizeRoutes(app)
app
  .get('/hello', (c) => c.text('ok'))
  // What edgeserve adds to a request: deployments that do no work, beside the bare route above.
  .get('/noop', ingress(noOp))
  .get('/noop-batched', ingress(batchedNoOp))
  // The house-price route's HTTP work without edgeserve or a model: the same JSON read and parsed, the same shape answered.
  .post('/predict-hono', async (c) => {
    const body = (await readJson(c.req.raw, 16 * 1024)) as { features?: unknown }
    parseFeatures(body.features)
    return c.json({ prediction: 0 })
  })
  // The OCR route's work before the model, decode + preprocess of the posted image, `n` times over, as
  // its requests and batches do it (../prepare-work.ts). bench/prepare.ts times it from outside, n
  // against n = 0, on each runtime (a Worker's clock moves in whole milliseconds locally, and not at all deployed).
  .post('/prepare', async (c) => {
    const n = Number(c.req.query('n'))
    if (!Number.isInteger(n) || n < 0 || n > 10_000) return c.json({ error: 'n must be an integer from 0 to 10000' }, 400)
    const bytes = new Uint8Array(await c.req.arrayBuffer())
    prepareImages(bytes, n)
    return c.json({ n })
  })
  .post('/ocr', ingress(ocrBatched))
  .post('/ocr-unbatched', ingress(ocrUnbatched))
  .post('/predict', ingress(housePrice))
  .post('/predict-t0', ingress(housePriceT0))
  .post('/predict-single-calls', ingress(housePriceSingleCalls))
  .post('/predict-t0-single-calls', ingress(housePriceT0SingleCalls))
  .post('/predict-unbatched', ingress(mlpUnbatched))
  // The same JSON read and answer through readJson() and through request.json() + Response.json().
  .post('/json-helpers', ingress(jsonHelpers))
  .post('/json-web', ingress(jsonWeb))
  // Each model's limit in one isolate, timed by the client (./isolate-limit.ts).
  .post('/isolate-limit', ingress(isolateLimit))
export default app
