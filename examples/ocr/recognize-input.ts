/**
 * The recognizer's input (PaddleOCR's resize_norm_img for PP-OCRv4,
 * rec_image_shape 3 x 48 x W): a text line resized to 48 px high keeping its
 * aspect ratio, normalized to (x / 255 - 0.5) / 0.5 in B, G, R order, and
 * padded on the right with 0 (mid-gray) up to the batch's width.
 *
 * Ragged batching: a batch's lines must share one width, so each line falls
 * into the smallest of a few allowed widths (its bucket) that fits it, and
 * only lines of one bucket share a batch, padded to the widest of them. A
 * short line thus never pays for a long one's padding. Lines wider than the
 * widest bucket are squeezed to it.
 */
import type { RgbImage } from '../ocr-direction/image.js'
import { resizeRgb } from './rgb.js'

export const REC_HEIGHT = 48
/**
 * Bucket edges, in pixels at height 48, each about 1.25 times the last: lines
 * in one bucket differ by at most a quarter in width, so a batch pads little.
 * With coarser buckets (160, 320, 480, ...) a line padded to its bucket was
 * read differently now and then ("quickly-" for "quickly."); with these, the
 * measured lines read exactly as alone. Wider lines are squeezed to 1920.
 */
export const REC_WIDTHS = [160, 200, 256, 320, 400, 512, 640, 800, 1024, 1280, 1600, 1920] as const

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
