import { HTTPError, MODEL_ID_HEADER, batch, deployment, multiplexed, multiplexedModelId, readJson } from 'edgeserve'
import { loadModel, stack } from 'edgeserve/onnx'
import modelBytes from '#example-model/regional-house-price'
import { INPUT_NAME, NUM_FEATURES, OUTPUT_NAME } from '../house-price/features.js'
import { BODY_LIMIT, parseFeatureBody } from '../house-price/parse.js'
import { isRegion, REGIONS } from './regions.js'

/** One answer of `POST /predict`. */
export interface RegionalPrediction {
  region: string
  prediction: number
}

/**
 * House prices for several markets from one deployment (Ray Serve's model
 * multiplexing): a request names its market in the
 * `edgeserve-multiplexed-model-id` header, each replica keeps the models of
 * the two markets it was last asked for, the router sends a market's
 * requests to the replica that holds its model, and a batch holds one
 * market's rows, predicted with one `session.run`.
 */
export class RegionalPricePredictor {
  /** Loaded on first use per replica; past two, the least recently used market's session is released. */
  readonly getModel = multiplexed(
    async (region: string) => {
      if (!isRegion(region)) throw unknownRegion(region)
      return loadModel(await modelBytes(region))
    },
    { maxModelsPerReplica: 2 },
  )

  /** One market's rows per batch: the queue keys batches by the model id without a batchKey. */
  readonly predict = batch(
    async (rows: number[][]) => {
      const model = await this.getModel(multiplexedModelId())
      const outputs = await model.run({ [INPUT_NAME]: stack(rows, [NUM_FEATURES]) })
      return Array.from(outputs[OUTPUT_NAME]!.data as Float32Array)
    },
    { maxBatchSize: 32 },
  )

  async fetch(request: Request): Promise<RegionalPrediction> {
    // The region is checked before the body is read: an unknown one is a 404 at once.
    const region = multiplexedModelId()
    if (!isRegion(region)) throw unknownRegion(region)
    if (request.method !== 'POST') throw new HTTPError(405, 'use POST with a JSON body {"features": [8 numbers]}')
    const features = parseFeatureBody(await readJson(request, BODY_LIMIT))
    return { region, prediction: await this.predict(features) }
  }
}

function unknownRegion(region: string): HTTPError {
  return new HTTPError(404, `no model for region ${JSON.stringify(region)}; send ${MODEL_ID_HEADER}: one of ${Object.keys(REGIONS).join(', ')}`)
}

/**
 * Autoscaled between one and three replicas. `maxOngoingRequests` is what
 * makes a busy market spill over to a second replica (which loads its model
 * too); below it, a market stays on its own replica.
 */
export const regionalHousePrice = deployment(RegionalPricePredictor, {
  name: 'RegionalHousePrice',
  maxOngoingRequests: 32,
  requestTimeoutS: 10,
  autoscaling: { minReplicas: 1, maxReplicas: 3, targetOngoingRequests: 16, upscaleDelayS: 1, downscaleDelayS: 10, lookBackPeriodS: 3 },
})
