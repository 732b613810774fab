/**
 * A malformed item fails alone, by default (issue #40): the house-price model
 * served over a real loopback HTTP server by predictors written the plain way
 * (request.json(), stack(rows, [8]), one session.run), hit with a burst of
 * good requests and one whose features are too few. The good ones answer
 * 200 with the model's own prediction; the bad one a 422 JSON error.
 */
import { readFileSync } from 'node:fs'
import { Hono } from 'hono'
import * as ort from 'onnxruntime-web'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { batch, deployment, ingress } from '../../src/index.js'
import { loadModel, stack, type Model } from '../../src/onnx/node.js'
import { serve, type RunningServer } from '../../src/runtime/node/index.js'

const MODEL = new Uint8Array(readFileSync(new URL('../../examples/house-price/model/house-price.onnx', import.meta.url)))

/** Every batch size each predictor ran, so the test knows the bad request shared a batch with good ones. */
const batchSizes: Record<string, number[]> = { item: [], requests: [] }

/** Batched like the README's Classifier: fetch reads the body, a batched function stacks and runs. */
class ItemPredictor {
  #model: Promise<Model> | undefined

  predict = batch(
    async (rows: number[][]) => {
      batchSizes.item!.push(rows.length)
      const model = await (this.#model ??= loadModel(MODEL))
      const out = await model.run({ features: stack(rows, [8]) })
      const prices = out.price!.data as Float32Array
      return rows.map((_, i) => prices[i]!)
    },
    { maxBatchSize: 32, batchWaitTimeoutS: 0.05 },
  )

  async fetch(request: Request) {
    const { features } = (await request.json()) as { features: number[] }
    return Response.json({ prediction: await this.predict(features) })
  }
}

/** Batched like the house-price example: the deployment's `batching` hands fetch the whole batch of requests. */
class RequestsPredictor {
  #model: Promise<Model> | undefined

  async fetch(requests: Request[]) {
    batchSizes.requests!.push(requests.length)
    const rows = await Promise.all(requests.map(async (request) => ((await request.json()) as { features: number[] }).features))
    const model = await (this.#model ??= loadModel(MODEL))
    const out = await model.run({ features: stack(rows, [8]) })
    const prices = out.price!.data as Float32Array
    return rows.map((_, i) => ({ prediction: prices[i]! }))
  }
}

/** 19 plausible California block groups (the model's 8 features), made up deterministically. */
const HOUSES = Array.from({ length: 19 }, (_, i) => [1 + (i % 9), 5 + i * 2, 4 + (i % 4), 1 + (i % 3) * 0.05, 300 + i * 80, 2 + (i % 5) * 0.3, 33 + (i % 8), -122 + (i % 7)])
const BAD_AT = 9

let server: RunningServer
let expected: number[]

beforeAll(async () => {
  vi.spyOn(console, 'log').mockImplementation(() => undefined)
  const app = new Hono()
  app.post('/item/predict', ingress(deployment(ItemPredictor)))
  app.post('/requests/predict', ingress(deployment(RequestsPredictor, { batching: { maxBatchSize: 32, batchWaitTimeoutS: 0.05 } })))
  server = await serve(app, { port: 0, name: 'malformed-item', handleSignals: false })
  ort.env.wasm.numThreads = 1
  const session = await ort.InferenceSession.create(MODEL, { executionProviders: ['wasm'] })
  const direct = await session.run({ features: new ort.Tensor('float32', Float32Array.from(HOUSES.flat()), [HOUSES.length, 8]) })
  expected = Array.from(direct.price!.data as Float32Array)
})
afterAll(async () => {
  await server.close()
  vi.restoreAllMocks()
})

for (const [kind, path] of [
  ['item', '/item/predict'],
  ['requests', '/requests/predict'],
] as const) {
  describe(`a batch with one malformed request on Node (${kind === 'item' ? 'batch() of feature rows' : 'deployment batching of requests'})`, () => {
    it('answers every good request 200 with its prediction, and the malformed one 422 alone', async () => {
      batchSizes[kind] = []
      const bodies = [...HOUSES.slice(0, BAD_AT).map((features) => ({ features })), { features: [1, 2] }, ...HOUSES.slice(BAD_AT).map((features) => ({ features }))]
      const responses = await Promise.all(
        bodies.map((body) =>
          fetch(server.url + path, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
        ),
      )
      const answers = await Promise.all(responses.map(async (response) => [response.status, await response.json()] as const))
      // The malformed request shared its first batch with good ones: the case this is about.
      expect(Math.max(...batchSizes[kind]!)).toBeGreaterThan(1)
      const [badStatus, badBody] = answers[BAD_AT]!
      expect([badStatus, badBody]).toEqual([422, { error: { type: 'HTTPError', message: 'item has 2 values, but shape [8] needs 8' } }])
      const good = answers.filter((_, i) => i !== BAD_AT)
      good.forEach(([status, body], i) => {
        expect(status, `request ${i}: ${JSON.stringify(body)}`).toBe(200)
        expect((body as { prediction: number }).prediction).toBeCloseTo(expected[i]!, 5)
      })
    })
  })
}
