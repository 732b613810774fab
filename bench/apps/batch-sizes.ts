/**
 * The shipped adaptive examples at fixed batch sizes, for the rows that
 * compare `adaptive` with every fixed `maxBatchSize` (docs/benchmarks.md):
 * the OCR direction classifier and the house-price MLP, each as its own
 * deployment per size, so that one server (or one wrangler dev) serves all
 * of them and their rows can be measured round-robin.
 */
import { Hono } from 'hono'
import { ingress, type Deployment } from '../../src/index.js'
import { ocrDirection } from '../../examples/ocr-direction/classifier.js'
import { housePrice } from '../../examples/house-price/predictor.js'

/** The fixed sizes measured: 1, 2, 4, ... up to the examples' bound (32 for both). */
export const FIXED_SIZES = [1, 2, 4, 8, 16, 32] as const

const named = (name: string) => ({ name, binding: name })

/** The classifier at a fixed `maxBatchSize` n, by n. */
export const ocrFixed: Record<number, Deployment> = Object.fromEntries(
  FIXED_SIZES.map((n) => [n, ocrDirection.withOptions(named(`OcrFixed${n}`)).bind({ maxBatchSize: n, adaptive: false })]),
)

/** The latency target of the classifier's open-loop row (docs/benchmarks.md): the shipped example's p99 at 60% load is well inside it. */
export const OCR_LATENCY_TARGET_MS = 100

/** The classifier with `adaptive: { latencyTargetMs }`, for the open-loop row. */
export const ocrTarget: Deployment = ocrDirection.withOptions(named('OcrTarget')).bind({ adaptive: { latencyTargetMs: OCR_LATENCY_TARGET_MS } })

/** The house-price MLP at a fixed `maxBatchSize` n, its other batching options as shipped. */
export const mlpFixed: Record<number, Deployment> = Object.fromEntries(
  FIXED_SIZES.map((n) => [
    n,
    housePrice.withOptions({ ...named(`MlpFixed${n}`), batching: { ...housePrice.options.batching!, maxBatchSize: n, adaptive: false } }),
  ]),
)

/** `POST /sizes/ocr/<n>`, `POST /sizes/mlp/<n>` and `POST /sizes/ocr/target`. */
export function batchSizeRoutes(app: Hono): Hono {
  app.post('/sizes/ocr/target', ingress(ocrTarget))
  for (const n of FIXED_SIZES) {
    app.post(`/sizes/ocr/${n}`, ingress(ocrFixed[n]!))
    app.post(`/sizes/mlp/${n}`, ingress(mlpFixed[n]!))
  }
  return app
}
