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
import type { RgbImage } from './image.js'

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

/** Source index and weight of the next pixel, with OpenCV's half-pixel centres and edge clamping. */
function sourceAxis(d: number, scale: number, size: number): [index: number, frac: number] {
  const f = (d + 0.5) * scale - 0.5
  const i = Math.floor(f)
  if (i < 0) return [0, 0]
  if (i >= size - 1) return [size - 1, 0]
  return [i, f - i]
}

/**
 * Bilinear resize with OpenCV INTER_LINEAR conventions (no antialiasing),
 * rounding back to uint8 as cv2 does for 8-bit input.
 */
export function resizeBilinear(img: RgbImage, dstW: number, dstH: number): RgbImage {
  const { width: srcW, height: srcH, data: src } = img
  const out = new Uint8Array(dstW * dstH * 3)
  const sx = srcW / dstW
  const sy = srcH / dstH
  const at = (i: number): number => src[i] ?? 0
  for (let y = 0; y < dstH; y++) {
    const [y0, fy] = sourceAxis(y, sy, srcH)
    const y1 = Math.min(y0 + 1, srcH - 1)
    for (let x = 0; x < dstW; x++) {
      const [x0, fx] = sourceAxis(x, sx, srcW)
      const x1 = Math.min(x0 + 1, srcW - 1)
      for (let c = 0; c < 3; c++) {
        const p00 = at((y0 * srcW + x0) * 3 + c)
        const p01 = at((y0 * srcW + x1) * 3 + c)
        const p10 = at((y1 * srcW + x0) * 3 + c)
        const p11 = at((y1 * srcW + x1) * 3 + c)
        const top = p00 + (p01 - p00) * fx
        const bottom = p10 + (p11 - p10) * fx
        out[(y * dstW + x) * 3 + c] = Math.round(top + (bottom - top) * fy)
      }
    }
  }
  return { width: dstW, height: dstH, data: out }
}

/**
 * One image as a [3, 48, 192] CHW float slice. Pass `out` and `offset` to
 * write straight into a batched [N, 3, 48, 192] buffer; `out` must be zeroed
 * there (a fresh Float32Array is), since the padding is left untouched.
 */
export function clsPreprocess(img: RgbImage, out = new Float32Array(CLS_INPUT_SIZE), offset = 0): Float32Array {
  if (out.length < offset + CLS_INPUT_SIZE) throw new RangeError('clsPreprocess: output buffer too small')
  const w = clsResizedWidth(img.width, img.height)
  const resized = resizeBilinear(img, w, CLS_HEIGHT).data
  const plane = CLS_HEIGHT * CLS_WIDTH
  for (let y = 0; y < CLS_HEIGHT; y++) {
    for (let x = 0; x < w; x++) {
      const src = (y * w + x) * 3
      const dst = offset + y * CLS_WIDTH + x
      // Output channel 0 = B, 1 = G, 2 = R (cv2's BGR order).
      for (let c = 0; c < 3; c++) out[dst + c * plane] = ((resized[src + (2 - c)] ?? 0) / 255 - 0.5) / 0.5
    }
  }
  return out
}

/** A batch of crops as one NCHW float32 buffer [N, 3, 48, 192]. */
export function clsPreprocessBatch(images: readonly RgbImage[]): { data: Float32Array; dims: [number, number, number, number] } {
  const data = new Float32Array(images.length * CLS_INPUT_SIZE)
  images.forEach((img, n) => clsPreprocess(img, data, n * CLS_INPUT_SIZE))
  return { data, dims: [images.length, CLS_CHANNELS, CLS_HEIGHT, CLS_WIDTH] }
}
