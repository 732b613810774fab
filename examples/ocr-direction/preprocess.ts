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
 * more. Both run in WebAssembly (./wasm/preprocess.wat); clsPreprocess does
 * both at once.
 *
 * Details that matter for matching PaddleOCR:
 *  - Padding is 0 after normalization, which is mid-gray, not black.
 *  - PaddleOCR reads images with cv2.imread, so the channels are B, G, R.
 *  - Long lines are squashed horizontally to 192 px, not cropped.
 */
import type { DecodedImage } from './image.js'
import { CLS_CHANNELS, CLS_HEIGHT, CLS_INPUT_SIZE, CLS_WIDTH } from './shape.js'
import { theKernel, type Kernel, type Taps } from './wasm/kernel.js'

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
 * Each output row blends two source rows, so an image uses at most 96 of
 * its rows: only those are copied into the module's memory, which therefore
 * never holds more than 96 rows of the widest accepted image (1.2 MB).
 */
const SOURCE_ROWS = 2 * CLS_HEIGHT

/**
 * Copies the source rows the row taps name into the module's memory, and
 * points the taps at the copies. Short images (every text line) are copied
 * whole; a taller one has only its used rows copied, packed, each once (the
 * taps only move down the source, so a row repeats only right after itself).
 */
function copySourceRows(k: Kernel, src: Uint8Array, height: number, rowBytes: number): void {
  if (height <= SOURCE_ROWS) {
    k.reserve(height * rowBytes)
    k.bytes.set(src.length === height * rowBytes ? src : src.subarray(0, height * rowBytes), k.source)
    return
  }
  k.reserve(SOURCE_ROWS * rowBytes)
  let lastRow = -1
  let slot = -1
  const place = (taps: Int32Array, y: number): void => {
    const row = taps[y]! / rowBytes
    if (row !== lastRow) {
      lastRow = row
      slot++
      k.bytes.set(src.subarray(row * rowBytes, (row + 1) * rowBytes), k.source + slot * rowBytes)
    }
    taps[y] = slot * rowBytes
  }
  for (let y = 0; y < CLS_HEIGHT; y++) {
    place(k.rows.lower, y)
    place(k.rows.upper, y)
  }
}

/** Resizes `img` into the kernel's line; returns the line's width. */
function resizeInKernel(k: Kernel, img: DecodedImage): number {
  const { width: srcW, height: srcH, data: src } = img
  const channels = img.channels ?? 3
  if (src.length < srcW * srcH * channels) {
    throw new RangeError(`image data too short: a ${srcW}x${srcH} image with ${channels} channel(s) needs ${srcW * srcH * channels} bytes, got ${src.length}`)
  }
  const w = clsResizedWidth(srcW, srcH)
  fillTaps(k.columns, w, srcW, channels)
  fillTaps(k.rows, CLS_HEIGHT, srcH, srcW * channels)
  copySourceRows(k, src, srcH, srcW * channels)
  k.resize(w, channels)
  return w
}

function checkOut(out: Float32Array, offset: number): void {
  if (out.length < offset + CLS_INPUT_SIZE) throw new RangeError(`output buffer too small: ${CLS_INPUT_SIZE} floats from offset ${offset} need ${offset + CLS_INPUT_SIZE}, got ${out.length}`)
}

/**
 * An image resized to the classifier's 48 rows, keeping its aspect ratio up
 * to 192 columns: bilinear, rounded back to 8 bits as cv2 does for uint8
 * input. Gray stays gray (a third of the bytes).
 */
export function clsResize(img: DecodedImage): ClsLine {
  const k = theKernel()
  const width = resizeInKernel(k, img)
  const channels = img.channels ?? 3
  return { width, channels, data: k.line(CLS_HEIGHT * width * channels).slice() }
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

/**
 * A resized line as a [3, 48, 192] CHW float slice, normalized to [-1, 1],
 * channels B, G, R, right-padded with 0. Pass `out` and `offset` to write
 * straight into a batched [N, 3, 48, 192] buffer; the padding is written
 * too, so `out` need not be zeroed.
 */
export function clsNormalize(line: ClsLine, out: Float32Array = new Float32Array(CLS_INPUT_SIZE), offset = 0): Float32Array {
  checkOut(out, offset)
  if (!isClsLine(line)) throw new RangeError(NOT_A_LINE)
  const k = theKernel()
  k.line(line.data.length).set(line.data)
  return normalizeInto(k, line.width, line.channels, out, offset)
}

/** The kernel's line normalized, and copied into `out` at `offset`. */
function normalizeInto(k: Kernel, width: number, channels: number, out: Float32Array, offset: number): Float32Array {
  k.normalize(width, channels)
  out.set(k.out, offset)
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
 * One image as a [3, 48, 192] CHW float slice: clsResize and clsNormalize
 * at once, the line never leaving the WebAssembly memory. Pass `out` and
 * `offset` to write straight into a batched [N, 3, 48, 192] buffer, which
 * need not be zeroed.
 */
export function clsPreprocess(img: DecodedImage, out: Float32Array = new Float32Array(CLS_INPUT_SIZE), offset = 0): Float32Array {
  checkOut(out, offset)
  const k = theKernel()
  return normalizeInto(k, resizeInKernel(k, img), img.channels ?? 3, out, offset)
}

/** Decoded crops as a batch's input. */
export function clsPreprocessBatch(images: readonly DecodedImage[]): ClsBatch {
  return inputOf(images, clsPreprocess)
}
