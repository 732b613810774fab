/**
 * What the served OCR direction route does with an image before the model
 * runs, for the bench to time on each runtime: each request decodes its
 * image and resizes it to a line (clsResize), and each batch normalizes
 * its lines into the model's input (clsNormalize).
 */
import { decodeImage } from '../examples/ocr-direction/image.js'
import { CLS_INPUT_SIZE, clsNormalize, clsNormalizeBatch, clsResize } from '../examples/ocr-direction/preprocess.js'

/** One batch's input for `n` requests posting `bytes`, as a served batch makes it. */
export function prepareBatch(bytes: Uint8Array, n: number): Float32Array {
  return clsNormalizeBatch(Array.from({ length: n }, () => clsResize(decodeImage(bytes)))).data
}

/**
 * Decode + preprocess of `n` images: each decoded, resized to a line and
 * normalized into one reused input slice. The model's input is allocated
 * once per batch with or without preprocessing (before the two steps,
 * `stack()` did it), so its allocation is the batch's cost, not this.
 */
export function prepareImages(bytes: Uint8Array, n: number): void {
  for (let i = 0; i < n; i++) clsNormalize(clsResize(decodeImage(bytes)), slice)
}
const slice = new Float32Array(CLS_INPUT_SIZE)
