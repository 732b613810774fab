/**
 * Preprocessing for PaddleOCR's text-direction classifier
 * (ch_ppocr_mobile_v2.0_cls), matching TextClassifier.resize_norm_img in
 * PaddleOCR's tools/infer/predict_cls.py with cls_image_shape = [3, 48, 192]:
 *
 *   ratio     = w / h
 *   resized_w = imgW if ceil(imgH * ratio) > imgW else ceil(imgH * ratio)
 *   resized   = cv2.resize(img, (resized_w, imgH))        # bilinear, uint8 result
 *   x         = (resized.transpose(2, 0, 1) / 255 - 0.5) / 0.5
 *   out       = zeros(3, imgH, imgW); out[:, :, :resized_w] = x
 *
 * Details that matter for matching PaddleOCR:
 *  - Padding is 0 after normalization, which is mid-gray, not black.
 *  - PaddleOCR reads images with cv2.imread, so the channels are B, G, R.
 *  - Long lines are squashed horizontally to 192 px, not cropped.
 */
import type { DecodedImage } from './image.js'

export const CLS_CHANNELS = 3
export const CLS_HEIGHT = 48
export const CLS_WIDTH = 192
/** Floats per image: one [3, 48, 192] CHW slice of the model's [N, 3, 48, 192] input. */
export const CLS_INPUT_SIZE = CLS_CHANNELS * CLS_HEIGHT * CLS_WIDTH

/** Width the image is resized to before right-padding (PaddleOCR's rule). */
export function clsResizedWidth(width: number, height: number): number {
  const w = Math.ceil(CLS_HEIGHT * (width / height))
  return Math.max(1, Math.min(CLS_WIDTH, w))
}

/** `(v / 255 - 0.5) / 0.5` for every 8-bit value, as float32: one lookup per output value. */
const NORMALIZED = Float32Array.from({ length: 256 }, (_, v) => (v / 255 - 0.5) / 0.5)

/**
 * Where each output column or row samples its source, with OpenCV's
 * INTER_LINEAR conventions (half-pixel centres, edges clamped, no
 * antialiasing): where the lower source pixel starts, where the next one
 * (clamped) starts, and the weight of the next. Filled per image into
 * arrays sized for the largest axis, so resizing allocates nothing per
 * pixel. These scratch arrays (and the row slots below) are shared by every
 * call: clsPreprocess is synchronous, so two calls never interleave.
 */
interface Taps {
  lower: Int32Array
  upper: Int32Array
  weight: Float64Array
}

const taps = (size: number): Taps => ({ lower: new Int32Array(size), upper: new Int32Array(size), weight: new Float64Array(size) })
const COLUMNS = taps(CLS_WIDTH)
const ROWS = taps(CLS_HEIGHT)

/** Taps for `dstSize` samples of a `srcSize` axis, as offsets in the source: `stride` bytes per step. */
function fillTaps(into: Taps, dstSize: number, srcSize: number, stride: number): void {
  const scale = srcSize / dstSize
  for (let d = 0; d < dstSize; d++) {
    const f = (d + 0.5) * scale - 0.5
    const i = Math.min(Math.max(Math.floor(f), 0), srcSize - 1)
    into.lower[d] = i * stride
    into.upper[d] = Math.min(i + 1, srcSize - 1) * stride
    // Past either edge the edge pixel repeats: no weight on a neighbour.
    into.weight[d] = f < 0 || i === srcSize - 1 ? 0 : f - i
  }
}

/**
 * Source rows resized horizontally (`width * channels` values each), kept
 * while the output rows step between them: a row is interpolated across
 * once, however many output rows blend it. Output rows only move down the
 * source, so two rows are all that is ever needed.
 */
const RESIZED_ROWS = [new Float64Array(CLS_WIDTH * 3), new Float64Array(CLS_WIDTH * 3)] as const
const rowInSlot = [-1, -1]

/** Source row `row` (a byte offset) resized across; fills the slot that does not hold `keep`. */
function resizedRow(src: Uint8Array, row: number, keep: number, w: number, channels: number): Float64Array {
  if (rowInSlot[0] === row) return RESIZED_ROWS[0]
  if (rowInSlot[1] === row) return RESIZED_ROWS[1]
  const slot = rowInSlot[0] === keep ? 1 : 0
  const values = RESIZED_ROWS[slot]
  const { lower: lefts, upper: rights, weight: fxs } = COLUMNS
  if (channels === 1) {
    // Gray, the usual text crop: one sample a pixel, no loop over channels.
    for (let x = 0; x < w; x++) {
      const left = src[row + lefts[x]!]!
      values[x] = left + (src[row + rights[x]!]! - left) * fxs[x]!
    }
  } else {
    for (let x = 0, i = 0; x < w; x++) {
      const left = row + lefts[x]!
      const right = row + rights[x]!
      const fx = fxs[x]!
      for (let c = 0; c < channels; c++, i++) values[i] = src[left + c]! + (src[right + c]! - src[left + c]!) * fx
    }
  }
  rowInSlot[slot] = row
  return values
}

/**
 * One image as a [3, 48, 192] CHW float slice. Pass `out` and `offset` to
 * write straight into a batched [N, 3, 48, 192] buffer; `out` must be zeroed
 * there (a fresh Float32Array is), since the padding is left untouched.
 *
 * The bilinear resize (rounded back to 8 bits, as cv2 does for uint8 input),
 * the BGR reorder and the normalization happen in one pass over the output
 * rows, from the decoded pixels straight into `out`, with two resized
 * source rows as scratch: no resized image, nothing allocated per pixel.
 * A gray image is resized once and written to all three channels.
 */
export function clsPreprocess(img: DecodedImage, out = new Float32Array(CLS_INPUT_SIZE), offset = 0): Float32Array {
  if (out.length < offset + CLS_INPUT_SIZE) throw new RangeError('clsPreprocess: output buffer too small')
  const { width: srcW, height: srcH, data: src } = img
  const channels = img.channels ?? 3
  if (src.length < srcW * srcH * channels) {
    throw new RangeError(`clsPreprocess: a ${srcW}x${srcH} image with ${channels} channel(s) needs ${srcW * srcH * channels} bytes, got ${src.length}`)
  }
  const w = clsResizedWidth(srcW, srcH)
  fillTaps(COLUMNS, w, srcW, channels)
  fillTaps(ROWS, CLS_HEIGHT, srcH, srcW * channels)
  rowInSlot[0] = rowInSlot[1] = -1 // a new image: nothing cached
  const plane = CLS_HEIGHT * CLS_WIDTH
  for (let y = 0; y < CLS_HEIGHT; y++) {
    const top = ROWS.lower[y]!
    const bottom = ROWS.upper[y]!
    const fy = ROWS.weight[y]!
    const upper = resizedRow(src, top, bottom, w, channels)
    const lower = resizedRow(src, bottom, top, w, channels)
    // Output channel 0 = B, 1 = G, 2 = R (cv2's BGR order).
    const b = offset + y * CLS_WIDTH
    const g = b + plane
    const r = g + plane
    if (channels === 1) {
      for (let x = 0; x < w; x++) out[b + x] = NORMALIZED[Math.round(upper[x]! + (lower[x]! - upper[x]!) * fy)]!
      out.copyWithin(g, b, b + w)
      out.copyWithin(r, b, b + w)
      continue
    }
    for (let x = 0, i = 0; x < w; x++, i += 3) {
      out[r + x] = NORMALIZED[Math.round(upper[i]! + (lower[i]! - upper[i]!) * fy)]!
      out[g + x] = NORMALIZED[Math.round(upper[i + 1]! + (lower[i + 1]! - upper[i + 1]!) * fy)]!
      out[b + x] = NORMALIZED[Math.round(upper[i + 2]! + (lower[i + 2]! - upper[i + 2]!) * fy)]!
    }
  }
  return out
}

/** A batch of crops as one NCHW float32 buffer [N, 3, 48, 192]. */
export function clsPreprocessBatch(images: readonly DecodedImage[]): { data: Float32Array; dims: [number, number, number, number] } {
  const data = new Float32Array(images.length * CLS_INPUT_SIZE)
  images.forEach((img, n) => clsPreprocess(img, data, n * CLS_INPUT_SIZE))
  return { data, dims: [images.length, CLS_CHANNELS, CLS_HEIGHT, CLS_WIDTH] }
}
