/**
 * The detector's input, as PaddleOCR's DetResizeForTest and NormalizeImage
 * make it for PP-OCRv4 (det_limit_side_len 960, limit type 'max'):
 *
 *   ratio  = 960 / max(h, w) if max(h, w) > 960 else 1
 *   h', w' = each rounded to a multiple of 32 (at least 32)
 *   x      = (resized[B, G, R] / 255 - mean) / std    mean 0.485 0.456 0.406, std 0.229 0.224 0.225
 *
 * Pages are resized once here (to 8-bit RGB) and normalized into the batch
 * buffer by the detector, so what crosses to a detector replica is a quarter
 * of the float tensor's size.
 */
import type { RgbImage } from '../ocr-direction/image.js'
import { resizeRgb } from './rgb.js'

export const DETECT_LIMIT_SIDE = 960
const MEAN = [0.485, 0.456, 0.406] as const
const STD = [0.229, 0.224, 0.225] as const

/** The detector's input size for a page: longest side at most 960, both sides multiples of 32. */
export function detectSize(width: number, height: number, limit = DETECT_LIMIT_SIDE): { width: number; height: number } {
  const ratio = Math.max(width, height) > limit ? limit / Math.max(width, height) : 1
  const round32 = (side: number): number => Math.max(32, Math.round((side * ratio) / 32) * 32)
  return { width: round32(width), height: round32(height) }
}

/** The page at the detector's size, still 8-bit RGB. */
export function resizeForDetection(page: RgbImage): RgbImage {
  const { width, height } = detectSize(page.width, page.height)
  return width === page.width && height === page.height ? page : resizeRgb(page, width, height)
}

/** Write one resized page into `out` as a normalized [3, h, w] slice in B, G, R order (cv2's). */
export function normalizeForDetection(page: RgbImage, out: Float32Array, offset: number): void {
  const plane = page.width * page.height
  const { data } = page
  for (let c = 0; c < 3; c++) {
    const source = 2 - c // channel 0 is blue
    const scale = 1 / (255 * STD[c]!)
    const shift = MEAN[c]! / STD[c]!
    const base = offset + c * plane
    for (let i = 0; i < plane; i++) out[base + i] = data[i * 3 + source]! * scale - shift
  }
}
