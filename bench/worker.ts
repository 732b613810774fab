/** The bench app on workerd (`wrangler dev -c bench/wrangler.toml`): each deployment in Durable Objects. */
import { durableObject, serveWorker } from '../src/runtime/workers/index.js'
import { app, housePriceSingleCalls, housePriceT0, housePriceT0SingleCalls, mlpUnbatched, ocrBatched, ocrUnbatched } from './apps/app.js'
import { batchedNoOp, noOp } from './apps/overhead.js'
import { jsonHelpers, jsonWeb } from './apps/json-body.js'
import { housePrice } from '../examples/house-price/predictor.js'
import { ocrFixed } from './apps/batch-sizes.js'
import { isolateLimit } from './apps/isolate-limit.js'
import { RawNoOp, rawHopRoute } from './apps/raw-hop.js'
import { inWorkerRoutes } from './apps/in-worker.js'
import { objectsApart } from './apps/objects-apart.js'

rawHopRoute(app)
inWorkerRoutes(app)
const worker = serveWorker(app)
export default {
  fetch: (request: Request, env: Record<string, unknown>, ctx: unknown) => worker.fetch(request, objectsApart(env), ctx),
}

export { RawNoOp }
export const IsolateLimit = durableObject(isolateLimit)

export const TextDirectionClassifier = durableObject(ocrBatched)
export const OcrUnbatched = durableObject(ocrUnbatched)
export const HousePricePredictor = durableObject(housePrice)
export const HousePriceT0 = durableObject(housePriceT0)
export const HousePriceSingleCalls = durableObject(housePriceSingleCalls)
export const HousePriceT0SingleCalls = durableObject(housePriceT0SingleCalls)
export const MlpUnbatched = durableObject(mlpUnbatched)
export const NoOp = durableObject(noOp)
export const BatchedNoOp = durableObject(batchedNoOp)
export const JsonHelpers = durableObject(jsonHelpers)
export const JsonWeb = durableObject(jsonWeb)
export const OcrFixed1 = durableObject(ocrFixed[1]!)
export const OcrFixed2 = durableObject(ocrFixed[2]!)
export const OcrFixed4 = durableObject(ocrFixed[4]!)
export const OcrFixed8 = durableObject(ocrFixed[8]!)
export const OcrFixed16 = durableObject(ocrFixed[16]!)
export const OcrFixed32 = durableObject(ocrFixed[32]!)
