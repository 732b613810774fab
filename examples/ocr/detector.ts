import { batch, deployment, replicaContext } from 'edgeserve'
import { lazyModel } from '../shared/lazy-model.js'
import { detectorBytes } from '#example-model/ocr'
import type { RgbImage } from '../ocr-direction/image.js'
import { dbPostprocess, type DetectedBox } from './db-postprocess.js'
import { normalizeForDetection } from './detect-input.js'

/** A page resized for the detector (see detect-input.ts), and the size of the page it came from. */
export interface DetectionInput {
  page: RgbImage
  pageWidth: number
  pageHeight: number
}

/**
 * Where is the text? PaddleOCR's PP-OCRv4 text detector (DB) with its
 * post-processing, boxes in the original page's coordinates.
 *
 * Batches are keyed by the page's resized shape, since one `session.run`
 * takes one shape.
 */
export class TextDetector {
  readonly #env = replicaContext().env
  /** Loaded on first use (Workers cap start-up at one second). */
  readonly #model = lazyModel(() => detectorBytes(this.#env))

  async checkHealth(): Promise<boolean> {
    await this.#model()
    return true
  }

  readonly detect: (input: DetectionInput) => Promise<DetectedBox[]>

  /**
   * The batch size is measured per page shape (`adaptive`): on a 2-core CPU
   * with WebAssembly four 480 x 416 pages in one run took 1.09x as long as
   * four runs of one, so there it settles on one page a run, while a backend
   * with a high fixed cost per run gains from batches. At most 4 pages by
   * default: a batch's tensors multiply the memory, which a Durable Object's
   * 128 MB must hold. `.bind({ adaptive: false, maxBatchSize: n })` fixes it.
   */
  constructor(options: { maxBatchSize?: number; adaptive?: boolean } = {}) {
    this.detect = batch((inputs: DetectionInput[]) => this.#run(inputs), {
      maxBatchSize: options.maxBatchSize ?? 4,
      adaptive: options.adaptive ?? true,
      batchKey: (input) => `${input.page.width}x${input.page.height}`,
    })
  }

  async #run(inputs: DetectionInput[]): Promise<DetectedBox[][]> {
    const model = await this.#model()
    const { width, height } = inputs[0]!.page
    const plane = 3 * width * height
    const data = new Float32Array(inputs.length * plane)
    inputs.forEach((input, i) => normalizeForDetection(input.page, data, i * plane))
    const outputs = await model.run({ [model.inputNames[0]!]: new model.Tensor('float32', data, [inputs.length, 3, height, width]) })
    const probs = outputs[model.outputNames[0]!]!.data as Float32Array
    const map = width * height
    return inputs.map((input, i) => dbPostprocess(probs.subarray(i * map, (i + 1) * map), width, height, input.pageWidth, input.pageHeight))
  }
}

export const textDetector = deployment(TextDetector)
