import { HTTPError, batch, deployment, readBody, type BatchedFunction } from 'edgeserve'
import type { Model } from 'edgeserve/onnx'
import { lazyModel } from '../shared/lazy-model.js'
import modelBytes from '#example-model/ocr-direction'
import { ImageDecodeError, decodeImage } from './image.js'
import { clsPostprocessBatch, type ClsResult } from './postprocess.js'
import { clsNormalizeBatch, clsResize, isClsLine, notALine, type ClsLine } from './preprocess.js'

/** The model's bytes on this runtime, for apps that run the model another way (the bench's isolate limit). */
export { modelBytes }

/** Text-line crops are small; 5 MB is generous and bounds what one request can cost. */
export const BODY_LIMIT = 5 * 1024 * 1024
const IMAGE_TYPES = /^(image\/(png|jpeg|jpg)|application\/octet-stream)\s*(;|$)/i

/**
 * Is this text line upright or upside down? PaddleOCR's direction
 * classifier, with up to 32 images per `session.run`: the queue measures
 * which batch size serves the most lines per second (`adaptive`), since that
 * depends on the runtime, its threads and what else runs on the machine.
 *
 * Each request decodes its own image and resizes it to 48 rows of 8-bit
 * pixels (so a broken image fails alone, before it can join a batch); the
 * batch normalizes its lines straight into the model's input and runs the
 * model once.
 */
export class TextDirectionClassifier {
  /**
   * Loaded on first use (Workers cap start-up at one second). On Node, one
   * single-threaded instance per core, each on a worker thread, share every
   * batch: the server's thread stays free for HTTP while the model runs, and
   * the cores do not wait on each other at every layer as ORT's own threads
   * do. Workers and browsers run one instance (see loadModel's `instances`).
   */
  readonly #lazyModel = lazyModel(modelBytes, { instances: 'auto' })

  async checkHealth(): Promise<boolean> {
    await this.#model()
    return true
  }

  /**
   * Batches in flight once the model is loaded: one per instance. While one
   * instance runs a batch, the next batch waits on the other, so neither
   * waits while the server answers one batch and gathers the next (as Triton
   * runs a batch on each instance of a model). Where the model runs in this
   * thread (one instance), batches run one at a time.
   */
  protected batchesInFlight(model: Model): number {
    return model.instances
  }

  async #model(): Promise<Model> {
    const model = await this.#lazyModel()
    const inFlight = this.batchesInFlight(model)
    if (this.classify.options.maxConcurrentBatches !== inFlight) this.classify.setMaxConcurrentBatches(inFlight)
    return model
  }

  /**
   * One resized text line in (clsResize), its direction out. A call through
   * a handle may pass anything: an item that is not a line fails alone, with
   * a RangeError, and the model runs on the rest.
   */
  readonly classify: BatchedFunction<ClsLine, ClsResult>

  /** `.bind({ adaptive: false, maxBatchSize: n })` runs batches of up to n lines without measuring; `adaptive: { latencyTargetMs }` adds a target. */
  constructor(options: { maxBatchSize?: number; adaptive?: boolean | { latencyTargetMs: number } } = {}) {
    this.classify = batch((items: ClsLine[]) => this.#classify(items), { maxBatchSize: options.maxBatchSize ?? 32, adaptive: options.adaptive ?? true })
  }

  async #classify(items: ClsLine[]): Promise<(ClsResult | Error)[]> {
    const model = await this.#model()
    const isLine = items.map(isClsLine)
    const lines = items.filter((_, i) => isLine[i])
    const results = lines.length > 0 ? await classifyLines(model, lines) : []
    let next = 0
    return items.map((_, i) => (isLine[i] ? results[next++]! : notALine()))
  }

  async fetch(request: Request): Promise<ClsResult> {
    const line = await readLine(request)
    // After the awaits above, the call still inherits the request's disconnect signal and deadline.
    return this.classify(line)
  }
}

/**
 * The posted image as one text line: a POST of a PNG or JPEG body, decoded
 * and resized (clsResize). A broken image is a 422 and one past the
 * decoder's bounds a 413, for this request alone.
 */
export async function readLine(request: Request): Promise<ClsLine> {
  if (request.method !== 'POST') throw new HTTPError(405, 'POST a PNG or JPEG image as the request body')
  const type = request.headers.get('content-type')
  if (type !== null && !IMAGE_TYPES.test(type)) {
    throw new HTTPError(415, `expected a PNG or JPEG body (content-type image/png or image/jpeg), received ${JSON.stringify(type.slice(0, 60))}`)
  }
  const bytes = await readBody(request, BODY_LIMIT)
  if (bytes.byteLength === 0) throw new HTTPError(400, 'the request body is empty: POST a PNG or JPEG image')
  try {
    return clsResize(decodeImage(bytes))
  } catch (error) {
    if (error instanceof ImageDecodeError) throw new HTTPError(error.reason === 'too-large' ? 413 : 422, error.message)
    throw error
  }
}

/** One `session.run` for `lines`: normalized into the model's input together, a direction for each. */
export async function classifyLines(model: Model, lines: ClsLine[]): Promise<ClsResult[]> {
  const { data, dims } = clsNormalizeBatch(lines)
  const outputs = await model.run({ [model.inputNames[0]!]: new model.Tensor('float32', data, dims) })
  return clsPostprocessBatch(outputs[model.outputNames[0]!]!.data as Float32Array, lines.length)
}

export const ocrDirection = deployment(TextDirectionClassifier)
