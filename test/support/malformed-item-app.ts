/**
 * The house-price model served by predictors written the plain way
 * (request.json(), stack(rows, [8]), one session.run), for the "a malformed
 * item fails alone" tests on Node and in workerd (test/workers/worker.ts).
 * Each answer carries the runs its replica made so far, so a test sees that
 * the malformed request shared a batch with good ones and that batch ran
 * again without it.
 */
import { Hono } from 'hono'
import { batch, deployment, ingress } from 'edgeserve'
import { stack } from 'edgeserve/onnx'
import { modelBytes } from '../../examples/house-price/predictor.js'
import { lazyModel } from '../../examples/shared/lazy-model.js'

/** One run of a predictor's handler: its batch size, and whether stack() refused an item of it. */
export interface Run {
  size: number
  refused: boolean
}

export interface MalformedItemAnswer {
  prediction: number
  runs: Run[]
}

/** Records a run, and whether stack() threw for it (the predictor's code is otherwise as a user writes it). */
function recorded<T>(runs: Run[], size: number, stacked: () => T): T {
  try {
    const tensor = stacked()
    runs.push({ size, refused: false })
    return tensor
  } catch (error) {
    runs.push({ size, refused: true })
    throw error
  }
}

/** Batched like the README's Classifier: fetch reads the body, a batched function stacks and runs. */
export class ItemPredictor {
  readonly #model = lazyModel(modelBytes)
  readonly runs: Run[] = []

  predict = batch(
    async (rows: number[][]) => {
      const model = await this.#model()
      const out = await model.run({ features: recorded(this.runs, rows.length, () => stack(rows, [8])) })
      const prices = out.price!.data as Float32Array
      return rows.map((_, i) => prices[i]!)
    },
    { maxBatchSize: 32, batchWaitTimeoutS: 0.05 },
  )

  async fetch(request: Request): Promise<MalformedItemAnswer> {
    const { features } = (await request.json()) as { features: number[] }
    return { prediction: await this.predict(features), runs: [...this.runs] }
  }
}

/** Batched like the house-price example: the deployment's `batching` hands fetch the batch's requests. */
export class RequestsPredictor {
  readonly #model = lazyModel(modelBytes)
  readonly runs: Run[] = []

  async fetch(requests: Request[]): Promise<MalformedItemAnswer[]> {
    const rows = await Promise.all(requests.map(async (request) => ((await request.json()) as { features: number[] }).features))
    const model = await this.#model()
    const out = await model.run({ features: recorded(this.runs, rows.length, () => stack(rows, [8])) })
    const prices = out.price!.data as Float32Array
    return rows.map((_, i) => ({ prediction: prices[i]!, runs: [...this.runs] }))
  }
}

export const itemPredictor = deployment(ItemPredictor, { name: 'MalformedItemPredictor' })
export const requestsPredictor = deployment(RequestsPredictor, {
  name: 'MalformedRequestsPredictor',
  batching: { maxBatchSize: 32, batchWaitTimeoutS: 0.05 },
  // A request held past this fails 504, a clear failure where it would otherwise wait for good.
  requestTimeoutS: 5,
})

/** Requests that reached the batching predictor's route, before their bodies are read (test/support/slow-body-suite.ts). */
let requestsArrived = 0

export const malformedItemApp = new Hono()
  .post('/malformed/item/predict', ingress(itemPredictor))
  .use('/malformed/requests/predict', async (_, next) => {
    requestsArrived++
    await next()
  })
  .post('/malformed/requests/predict', ingress(requestsPredictor))
  .get('/malformed/requests/arrived', (c) => c.json(requestsArrived))

// A replica thread imports the app by its module's default export.
export default malformedItemApp
