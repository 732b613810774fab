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
 * In two steps: each request resizes its image to a line of 8-bit pixels
 * (clsResize, at most 27 KB), and its batch normalizes the lines straight
 * into the model's input (clsNormalize). A queued request so holds 9 KB for
 * a gray line rather than 110 KB of floats, and the batch copies nothing
 * more. clsPreprocess does both at once.
 *
 * Details that matter for matching PaddleOCR:
 *  - Padding is 0 after normalization, which is mid-gray, not black.
 *  - PaddleOCR reads images with cv2.imread, so the channels are B, G, R.
 *  - Long lines are squashed horizontally to 192 px, not cropped.
 */
import type { DecodedImage } from './image.js'
import { CLS_CHANNELS, CLS_HEIGHT, CLS_INPUT_SIZE, CLS_WIDTH } from './shape.js'

export { CLS_CHANNELS, CLS_HEIGHT, CLS_INPUT_SIZE, CLS_WIDTH }

/** Width the image is resized to before right-padding (PaddleOCR's rule). */
export function clsResizedWidth(width: number, height: number): number {
  const w = Math.ceil(CLS_HEIGHT * (width / height))
  return Math.max(1, Math.min(CLS_WIDTH, w))
}

/**
 * A text line resized for the classifier: 48 rows of `width` pixels of
 * `channels` bytes (gray, or R, G, B), packed. What a request keeps until
 * its batch runs.
 */
export interface ClsLine {
  width: number
  channels: 1 | 3
  data: Uint8Array
}

/**
 * Where each output column (or row) samples its source: the offsets of the
 * two source pixels it blends, and the weight of the second.
 */
interface Taps {
  lower: Int32Array
  upper: Int32Array
  weight: Float64Array
}

const taps = (size: number): Taps => ({ lower: new Int32Array(size), upper: new Int32Array(size), weight: new Float64Array(size) })
// Filled anew by each clsResize, which runs to completion before the next:
// allocating them per call costs more than the resize on some runtimes.
const columns = taps(CLS_WIDTH)
const rows = taps(CLS_HEIGHT)

/**
 * Taps for `dstSize` samples of a `srcSize` axis, as offsets in the source
 * (`stride` bytes a step), with OpenCV's INTER_LINEAR conventions: half-pixel
 * centres, edges clamped, no antialiasing.
 */
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
 * An image resized to the classifier's 48 rows, keeping its aspect ratio up
 * to 192 columns: bilinear, in float64, rounded back to 8 bits as cv2 does
 * for uint8 input. Gray stays gray (a third of the bytes).
 */
export function clsResize(img: DecodedImage): ClsLine {
  const { width: srcW, height: srcH, data: src } = img
  const channels = img.channels ?? 3
  if (src.length < srcW * srcH * channels) {
    throw new RangeError(`image data too short: a ${srcW}x${srcH} image with ${channels} channel(s) needs ${srcW * srcH * channels} bytes, got ${src.length}`)
  }
  const width = clsResizedWidth(srcW, srcH)
  fillTaps(columns, width, srcW, channels)
  fillTaps(rows, CLS_HEIGHT, srcH, srcW * channels)
  const line = new Uint8Array(CLS_HEIGHT * width * channels)
  let o = 0
  for (let y = 0; y < CLS_HEIGHT; y++) {
    const top = rows.lower[y]!
    const bottom = rows.upper[y]!
    const fy = rows.weight[y]!
    for (let x = 0; x < width; x++) {
      const left = columns.lower[x]!
      const right = columns.upper[x]!
      const fx = columns.weight[x]!
      for (let c = 0; c < channels; c++, o++) {
        const above = src[top + left + c]! + (src[top + right + c]! - src[top + left + c]!) * fx
        const below = src[bottom + left + c]! + (src[bottom + right + c]! - src[bottom + left + c]!) * fx
        line[o] = Math.round(above + (below - above) * fy)
      }
    }
  }
  return { width, channels, data: line }
}

function checkOut(out: Float32Array, offset: number): void {
  if (out.length < offset + CLS_INPUT_SIZE)
    throw new RangeError(`output buffer too small: ${CLS_INPUT_SIZE} floats from offset ${offset} need ${offset + CLS_INPUT_SIZE}, got ${out.length}`)
}

const NOT_A_LINE = `clsNormalize: expected a line of ${CLS_HEIGHT} rows of 1 to ${CLS_WIDTH} pixels of 1 or 3 bytes (clsResize makes one)`

/**
 * Whether `value` is a line clsNormalize can take: one that clsResize made,
 * or that came through a handle or a Durable Object's RPC from one.
 */
export function isClsLine(value: unknown): value is ClsLine {
  if (typeof value !== 'object' || value === null) return false
  const { width, channels, data } = value as Partial<ClsLine>
  return (
    Number.isInteger(width) &&
    width! >= 1 &&
    width! <= CLS_WIDTH &&
    (channels === 1 || channels === 3) &&
    data instanceof Uint8Array &&
    data.length === CLS_HEIGHT * width! * channels
  )
}

/** What a batch answers for an item that is not a line. */
export const notALine = (): RangeError => new RangeError(NOT_A_LINE)

/** Each 8-bit level v normalized as PaddleOCR does, (v / 255 - 0.5) / 0.5, as float32. */
const LEVELS = Float32Array.from({ length: 256 }, (_, v) => (v / 255 - 0.5) / 0.5)
const PLANE = CLS_HEIGHT * CLS_WIDTH

/**
 * A resized line as a [3, 48, 192] CHW float slice, normalized to [-1, 1],
 * channels B, G, R, right-padded with 0. Pass `out` and `offset` to write
 * straight into a batched [N, 3, 48, 192] buffer; the padding is written
 * too, so `out` need not be zeroed.
 */
export function clsNormalize(line: ClsLine, out: Float32Array = new Float32Array(CLS_INPUT_SIZE), offset = 0): Float32Array {
  checkOut(out, offset)
  if (!isClsLine(line)) throw new RangeError(NOT_A_LINE)
  const { width, channels, data } = line
  for (let y = 0; y < CLS_HEIGHT; y++) {
    // This row in the planes B, G and R (cv2's order), one plane apart.
    const blue = offset + y * CLS_WIDTH
    const from = y * width * channels
    if (channels === 1) {
      for (let x = 0; x < width; x++) out[blue + x] = LEVELS[data[from + x]!]!
      out.copyWithin(blue + PLANE, blue, blue + width)
      out.copyWithin(blue + 2 * PLANE, blue, blue + width)
    } else {
      for (let x = 0, i = from; x < width; x++, i += 3) {
        out[blue + x] = LEVELS[data[i + 2]!]!
        out[blue + PLANE + x] = LEVELS[data[i + 1]!]!
        out[blue + 2 * PLANE + x] = LEVELS[data[i]!]!
      }
    }
    for (let plane = 0; plane < 3; plane++) out.fill(0, blue + plane * PLANE + width, blue + plane * PLANE + CLS_WIDTH)
  }
  return out
}

/** A batch's input: one NCHW float32 buffer [N, 3, 48, 192], and its dims. */
export interface ClsBatch {
  data: Float32Array
  dims: [number, number, number, number]
}

/** `items` in one batch's input, each written into its own slice by `write`. */
function inputOf<I>(items: readonly I[], write: (item: I, out: Float32Array, offset: number) => unknown): ClsBatch {
  const data = new Float32Array(items.length * CLS_INPUT_SIZE)
  items.forEach((item, n) => write(item, data, n * CLS_INPUT_SIZE))
  return { data, dims: [items.length, CLS_CHANNELS, CLS_HEIGHT, CLS_WIDTH] }
}

/** Lines (clsResize) as a batch's input. */
export function clsNormalizeBatch(lines: readonly ClsLine[]): ClsBatch {
  return inputOf(lines, clsNormalize)
}

/**
 * One image as a [3, 48, 192] CHW float slice: clsResize, then clsNormalize.
 * Pass `out` and `offset` to write straight into a batched [N, 3, 48, 192]
 * buffer, which need not be zeroed.
 */
export function clsPreprocess(img: DecodedImage, out: Float32Array = new Float32Array(CLS_INPUT_SIZE), offset = 0): Float32Array {
  checkOut(out, offset)
  return clsNormalize(clsResize(img), out, offset)
}

/** Decoded crops as a batch's input. */
export function clsPreprocessBatch(images: readonly DecodedImage[]): ClsBatch {
  return inputOf(images, clsPreprocess)
}
