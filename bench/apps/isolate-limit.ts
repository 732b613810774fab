/**
 * Each example model's own limit inside one isolate, on its one thread: `n`
 * batches of `b` items run back to back in a Durable Object, with no HTTP
 * and no queue between them. The client times a request for `n` batches
 * against one for none (bench/isolate-limit.ts), since an object cannot
 * time itself well: deployed, its clock stands still while code runs, and
 * local workerd's moves only in whole milliseconds.
 *
 *   POST /isolate-limit?model=ocr|mlp&mode=run|pipeline&n=N&b=B   (OCR: the bench's image as the body)
 *
 * `pipeline` (OCR only) decodes and preprocesses the posted image `b` times
 * into each batch's input, as served requests and their batch do; `run`
 * builds the input once, so only `session.run` repeats.
 */
import { HTTPError, deployment, readBody } from '../../src/index.js'
import { loadModel, stack, type Model } from 'edgeserve/onnx'
import { modelBytes as ocrBytes } from '../../examples/ocr-direction/classifier.js'
import { modelBytes as mlpBytes } from '../../examples/house-price/predictor.js'
import { INPUT_NAME, NUM_FEATURES, OUTPUT_NAME } from '../../examples/house-price/features.js'
import { CLS_CHANNELS, CLS_HEIGHT, CLS_INPUT_SIZE, CLS_WIDTH } from '../../examples/ocr-direction/preprocess.js'
import { prepareBatch } from '../prepare-work.js'

const FEATURES = [8.3, 41, 6.9, 1.0, 322, 2.5, 37.88, -122.23]

export class IsolateLimit {
  readonly #models = new Map<string, Promise<Model>>()

  #model(name: 'ocr' | 'mlp'): Promise<Model> {
    let model = this.#models.get(name)
    if (!model) this.#models.set(name, (model = (name === 'ocr' ? ocrBytes() : mlpBytes()).then((bytes) => loadModel(bytes))))
    return model
  }

  async fetch(request: Request): Promise<{ n: number; b: number }> {
    const query = new URL(request.url).searchParams
    const name = query.get('model')
    const mode = query.get('mode') ?? 'run'
    const n = Number(query.get('n'))
    const b = Number(query.get('b'))
    if (name !== 'ocr' && name !== 'mlp') throw new HTTPError(400, 'model must be ocr or mlp')
    if (mode !== 'run' && mode !== 'pipeline') throw new HTTPError(400, 'mode must be run or pipeline')
    if (!Number.isInteger(n) || n < 0 || n > 100_000 || !Number.isInteger(b) || b < 1 || b > 256) throw new HTTPError(400, 'n must be 0..100000 and b 1..256')
    const image = await readBody(request, 1024 * 1024)
    const model = await this.#model(name)
    if (name === 'mlp') {
      const rows = Array.from({ length: b }, () => FEATURES)
      // stack() each time, as each served batch does: it is part of the batch's cost.
      for (let i = 0; i < n; i++) await model.run({ [INPUT_NAME]: stack(rows, [NUM_FEATURES]) }).then((out) => out[OUTPUT_NAME]!.data)
    } else {
      const input = model.inputNames[0]!
      const dims = [b, CLS_CHANNELS, CLS_HEIGHT, CLS_WIDTH]
      const once = mode === 'run' ? new Float32Array(b * CLS_INPUT_SIZE).fill(0.5) : undefined
      for (let i = 0; i < n; i++) await model.run({ [input]: new model.Tensor('float32', once ?? prepareBatch(image, b), dims) })
    }
    return { n, b }
  }
}

export const isolateLimit = deployment(IsolateLimit)
