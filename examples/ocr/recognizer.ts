import { batch, deployment, replicaContext } from 'edgeserve'
import { lazyModel } from '../shared/lazy-model.js'
import { characterList, recognizerBytes } from '#example-model/ocr'
import type { RgbImage } from '../ocr-direction/image.js'
import { ctcClasses, ctcGreedyDecode, type DecodedLine } from './ctc.js'
import { REC_HEIGHT, REC_WIDTHS, normalizeForRecognition, recBucket } from './recognize-input.js'

export interface RecognizerOptions {
  /**
   * The most lines per `session.run` (an upper bound while `adaptive` is
   * on). 1 runs each line alone, at its own bucket's width: the unbatched
   * baseline the benchmark compares against.
   */
  maxBatchSize?: number
  /** Whether the queue measures which batch size serves the most lines per second (per width bucket), or runs `maxBatchSize`. */
  adaptive?: boolean
  /**
   * Allowed input widths at height 48, ascending: lines share a run only
   * with lines of their bucket, padded to the widest. By default every
   * multiple of 8, so that no line is padded past its own width and reads
   * the same whatever it is batched with; `COARSE_REC_WIDTHS` lets more
   * lines share a run (see recognize-input.ts).
   */
  widths?: readonly number[]
}

/**
 * The batch size is measured, not chosen here: which one is fastest depends
 * on the backend. On a CPU with WebAssembly the recognizer's cost grows with
 * lines x width and one run per line beat batches by width bucket
 * (0.87-0.90x, scripts/models/ocr/bench-rec.ts); where a run's fixed cost is
 * high (WebGPU) batches pay. `adaptive` finds the size per width bucket, up
 * to 8 lines: a bucket's batch of 8 at the widest width is already a large
 * tensor.
 */
export const RECOGNIZER_DEFAULTS: Required<RecognizerOptions> = { maxBatchSize: 8, adaptive: true, widths: REC_WIDTHS }

/**
 * What does this line say? PaddleOCR's PP-OCRv4 recognizer (SVTR-LCNet, CTC)
 * over lines already resized to 48 px high (see recognize-input.ts).
 *
 * Ragged batching: lines are keyed by width bucket (the smallest allowed
 * width that fits: by default the line's own width, to 8 px), so lines from
 * any page share a run only with lines of their bucket, and a run is padded
 * to its widest line.
 */
export class TextRecognizer {
  readonly #env = replicaContext().env
  readonly #model = lazyModel(() => recognizerBytes(this.#env))
  #classes: Promise<string[]> | undefined
  readonly #widths: readonly number[]
  readonly recognize: (line: RgbImage) => Promise<DecodedLine>

  constructor(options: RecognizerOptions = {}) {
    const { maxBatchSize, adaptive, widths } = { ...RECOGNIZER_DEFAULTS, ...options }
    if (!Array.isArray(widths) || widths.length === 0 || widths.some((w, i) => !Number.isInteger(w) || w < 8 || (i > 0 && w <= widths[i - 1]!))) {
      throw new TypeError(`widths must be ascending whole pixel widths of at least 8, like [160, 320, 640], received ${JSON.stringify(widths)}`)
    }
    this.#widths = widths
    this.recognize = batch((lines: RgbImage[]) => this.#run(lines), {
      maxBatchSize,
      adaptive,
      batchKey: (line) => String(recBucket(line.width, this.#widths)),
    })
  }

  async checkHealth(): Promise<boolean> {
    await Promise.all([this.#model(), this.#characters()])
    return true
  }

  #characters(): Promise<string[]> {
    return (this.#classes ??= characterList(this.#env)
      .then(ctcClasses)
      .catch((error: unknown) => {
        this.#classes = undefined
        throw error
      }))
  }

  async #run(lines: RgbImage[]): Promise<DecodedLine[]> {
    const [model, classes] = await Promise.all([this.#model(), this.#characters()])
    // Padded to the batch's widest line (a multiple of 8, the model's stride), not to the bucket's edge:
    // the bucket only decides which lines may share a run.
    const width = Math.ceil(Math.max(...lines.map((line) => line.width)) / 8) * 8
    const size = 3 * REC_HEIGHT * width
    const data = new Float32Array(lines.length * size)
    lines.forEach((line, i) => normalizeForRecognition(line, width, data, i * size))
    const outputs = await model.run({ [model.inputNames[0]!]: new model.Tensor('float32', data, [lines.length, 3, REC_HEIGHT, width]) })
    const output = outputs[model.outputNames[0]!]!
    const [, steps, count] = output.dims as [number, number, number]
    if (count !== classes.length) throw new Error(`the recognizer has ${count} classes but its character list gives ${classes.length}`)
    const probs = output.data as Float32Array
    return lines.map((_, i) => ctcGreedyDecode(probs, i, steps, classes))
  }
}

export const textRecognizer = deployment(TextRecognizer)
