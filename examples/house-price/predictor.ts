import { HTTPError, deployment, readJson } from 'edgeserve'
import { stack } from 'edgeserve/onnx'
import { lazyModel } from '../shared/lazy-model.js'
import modelBytes from '#example-model/house-price'
import { INPUT_NAME, NUM_FEATURES, OUTPUT_NAME } from './features.js'
import { BODY_LIMIT, parseFeatureBody } from './parse.js'

/** The model's bytes on this runtime, for apps that serve the model another way (the bench's unbatched twin). */
export { modelBytes }

/** One answer of `POST /predict`. */
export interface Prediction {
  prediction: number
}

/**
 * A house-price regressor (as in Ray Serve's dynamic batching walkthrough) whose whole `fetch` is batched by the
 * deployment's `batching` config (Ray's `batching_config`). `fetch` receives
 * the batch's requests and returns one answer per request; one `session.run`
 * predicts every valid request of the batch.
 */
export class HousePricePredictor {
  /** Loaded on first use (Workers cap start-up at one second). */
  readonly #model = lazyModel(modelBytes)

  async checkHealth(): Promise<boolean> {
    await this.#model()
    return true
  }

  async fetch(requests: Request[]): Promise<(Prediction | Error)[]> {
    // A bad request fails alone: its slot holds its error, the rest are predicted.
    const parsed = await Promise.all(requests.map((request) => this.parse(request).catch((error: unknown) => asError(error))))
    const valid = parsed.filter((p): p is number[] => Array.isArray(p))
    const prices = valid.length > 0 ? await this.predict(valid) : []
    let next = 0
    // Plain values: edgeserve answers them as JSON, as it would a Response.json() of each.
    return parsed.map((p) => (Array.isArray(p) ? { prediction: prices[next++]! } : p))
  }

  /** Predict prices for many feature rows with one session.run. */
  async predict(rows: number[][]): Promise<number[]> {
    const model = await this.#model()
    const outputs = await model.run({ [INPUT_NAME]: stack(rows, [NUM_FEATURES]) })
    return Array.from(outputs[OUTPUT_NAME]!.data as Float32Array)
  }

  private async parse(request: Request): Promise<number[]> {
    if (request.method !== 'POST') throw new HTTPError(405, 'use POST with a JSON body {"features": [8 numbers]}')
    // readJson, not request.json(): another content type is a 415. The body is in memory already:
    // the deployment read it (up to maxBodyBytes) before the request joined the batch.
    return parseFeatureBody(await readJson(request, BODY_LIMIT))
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new HTTPError(400, String(error))
}

export const housePrice = deployment(HousePricePredictor, {
  // Up to 32 requests a batch, the size measured (`adaptive`): what pays depends on the runtime and the load.
  // A body declared past BODY_LIMIT is a 413 before it is read.
  batching: { maxBatchSize: 32, batchWaitTimeoutS: 0.1, strideS: 0, allowSmallBatch: true, adaptive: true, maxBodyBytes: BODY_LIMIT },
  // A client that trickles its body waits alone, outside any batch, and is answered 504 after this.
  requestTimeoutS: 10,
})
