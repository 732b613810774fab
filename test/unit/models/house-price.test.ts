import { readFileSync } from 'node:fs'
import * as ort from 'onnxruntime-web'
import { beforeAll, describe, expect, it } from 'vitest'
import { FEATURE_NAMES, INPUT_NAME, NUM_FEATURES, OUTPUT_NAME } from '../../../examples/house-price/features.js'
import { generateDataset, priceFormula } from '../../../scripts/models/house-price/dataset.js'
import { PARAM_NAMES, predict } from '../../../scripts/models/house-price/mlp.js'
import { readFloatParams } from '../../../scripts/models/lib/onnx-reader.js'

ort.env.wasm.numThreads = 1

const modelUrl = new URL('../../../examples/house-price/model/house-price.onnx', import.meta.url)
const bytes = new Uint8Array(readFileSync(modelUrl))
const meta = JSON.parse(readFileSync(new URL('house-price.meta.json', modelUrl), 'utf8')) as { features: string[] }
let session: ort.InferenceSession

beforeAll(async () => {
  session = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'] })
})

async function run(x: Float32Array, batch: number): Promise<ort.Tensor> {
  const result = await session.run({ [INPUT_NAME]: new ort.Tensor('float32', x, [batch, NUM_FEATURES]) })
  const out = result[OUTPUT_NAME]
  if (!out) throw new Error(`no output ${OUTPUT_NAME}`)
  return out
}

describe('house-price.onnx', () => {
  it('has the input and output that examples/house-price/features.ts describes', () => {
    expect(session.inputNames).toEqual([INPUT_NAME])
    expect(session.outputNames).toEqual([OUTPUT_NAME])
    expect(meta.features).toEqual([...FEATURE_NAMES])
  })

  it.each([1, 32])('matches a TypeScript forward pass over the weights in the file (batch %i)', async (batch) => {
    const params = readFloatParams(bytes, PARAM_NAMES)
    // Rows from a seed the model was not trained on.
    const x = generateDataset(batch, 7).x
    const out = await run(x, batch)
    expect(out.dims).toEqual([batch, 1])
    const expected = predict(params, x, batch)
    const got = out.data as Float32Array
    for (let i = 0; i < batch; i++) expect(got[i]).toBeCloseTo(expected[i]!, 4)
  })

  it('gives each row the same price alone as in a batch', async () => {
    const { x } = generateDataset(8, 11)
    const batched = (await run(x, 8)).data as Float32Array
    for (let i = 0; i < 8; i++) {
      const alone = (await run(x.slice(i * NUM_FEATURES, (i + 1) * NUM_FEATURES), 1)).data as Float32Array
      expect(alone[0]).toBeCloseTo(batched[i]!, 5)
    }
  })

  it('has learned the documented formula on unseen rows', async () => {
    const n = 500
    const { x } = generateDataset(n, 12345)
    const got = (await run(x, n)).data as Float32Array
    let squared = 0
    let baseline = 0
    const truth = Array.from({ length: n }, (_, i) => Math.min(5, Math.max(0.15, priceFormula(x.subarray(i * NUM_FEATURES, (i + 1) * NUM_FEATURES)))))
    const mean = truth.reduce((a, b) => a + b, 0) / n
    truth.forEach((t, i) => {
      squared += (got[i]! - t) ** 2
      baseline += (mean - t) ** 2
    })
    // Against the noise-free target: the model must be far better than predicting the mean.
    expect(Math.sqrt(squared / n)).toBeLessThan(0.2)
    expect(Math.sqrt(squared / n)).toBeLessThan(Math.sqrt(baseline / n) / 4)
  })
})
