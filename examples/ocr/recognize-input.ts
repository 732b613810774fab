/**
 * The recognizer's input (PaddleOCR's resize_norm_img for PP-OCRv4,
 * rec_image_shape 3 x 48 x W): a text line resized to 48 px high keeping its
 * aspect ratio, normalized to (x / 255 - 0.5) / 0.5 in B, G, R order, and
 * padded on the right with 0 (mid-gray) up to the batch's width.
 *
 * Ragged batching: a batch's lines must share one width, so each line falls
 * into the smallest of the allowed widths (its bucket) that fits it, and only
 * lines of one bucket share a batch, padded to the widest of them. Lines
 * wider than the widest bucket are squeezed to it.
 */
import type { RgbImage } from '../ocr-direction/image.js'
import { resizeRgb } from './rgb.js'

export const REC_HEIGHT = 48
/** The widest line, in pixels at height 48: wider ones are squeezed to it. */
const WIDEST = 1920

/**
 * The allowed widths by default: every multiple of 8 (the model's stride) up
 * to 1920. A line shares a batch only with lines of its own width, padded as
 * it would be alone, so it reads the same text, with the same confidence but
 * for float rounding, whatever else is in flight. The model mixes each line
 * across its whole width, padding included: padded to a wider line's bucket,
 * a line read differently now and then ("thirteen." for "thirteen", "World"
 * for "world"), so a page's answer depended on the pages served with it.
 */
export const REC_WIDTHS: readonly number[] = Array.from({ length: WIDEST / 8 }, (_, i) => (i + 1) * 8)

/**
 * Coarser buckets, each about 1.25 times the last: more lines share a run,
 * for a backend where a run's fixed cost is high (WebGPU), at the price of
 * answers that may change a little with what they are batched with.
 */
export const COARSE_REC_WIDTHS: readonly number[] = [160, 200, 256, 320, 400, 512, 640, 800, 1024, 1280, 1600, WIDEST]

/** The bucket of a line `width` pixels wide at height 48: the smallest allowed width that fits it. */
export function recBucket(width: number, widths: readonly number[] = REC_WIDTHS): number {
  for (const w of widths) if (w >= width) return w
  return widths[widths.length - 1]!
}

/** A crop resized to height 48 and at most the widest bucket, still 8-bit RGB: what crosses to a recognizer replica. */
export function resizeForRecognition(crop: RgbImage, widths: readonly number[] = REC_WIDTHS): RgbImage {
  const widest = widths[widths.length - 1]!
  const width = Math.max(1, Math.min(widest, Math.ceil(REC_HEIGHT * (crop.width / crop.height))))
  return resizeRgb(crop, width, REC_HEIGHT)
}

/**
 * Write a 48 px high line into `out` at `offset` as a [3, 48, bucketWidth]
 * slice; the rest of the row is set to 0, the normalized padding.
 */
export function normalizeForRecognition(line: RgbImage, bucketWidth: number, out: Float32Array, offset: number): void {
  const plane = REC_HEIGHT * bucketWidth
  const width = Math.min(line.width, bucketWidth)
  out.fill(0, offset, offset + 3 * plane)
  for (let y = 0; y < REC_HEIGHT; y++) {
    for (let x = 0; x < width; x++) {
      const src = (y * line.width + x) * 3
      const dst = offset + y * bucketWidth + x
      for (let c = 0; c < 3; c++) out[dst + c * plane] = line.data[src + 2 - c]! / 127.5 - 1
    }
  }
}
