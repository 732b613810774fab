import type { DecodedImage, RgbImage } from '../shared/pixels.js'

/** A decoded page as RGB: the detector and recognizer take three channels, and a gray PNG decodes to one. */
export function toRgb(image: DecodedImage): RgbImage {
  if (image.channels !== 1) return image
  const { width, height, data } = image
  const rgb = new Uint8Array(width * height * 3)
  for (let i = 0, j = 0; i < data.length; i++, j += 3) {
    const v = data[i]!
    rgb[j] = v
    rgb[j + 1] = v
    rgb[j + 2] = v
  }
  return { width, height, data: rgb }
}

/**
 * Bilinear resize of an RGB image with half-pixel centres (as OpenCV's
 * INTER_LINEAR, which PaddleOCR uses). The source positions of each column
 * are computed once, not per pixel, and nothing is allocated per pixel.
 */
export function resizeRgb(image: RgbImage, width: number, height: number): RgbImage {
  const { width: srcW, height: srcH, data: src } = image
  const out = new Uint8Array(width * height * 3)
  const x0s = new Int32Array(width)
  const x1s = new Int32Array(width)
  const fxs = new Float32Array(width)
  const sx = srcW / width
  for (let x = 0; x < width; x++) {
    const at = Math.min(Math.max((x + 0.5) * sx - 0.5, 0), srcW - 1)
    x0s[x] = Math.floor(at)
    x1s[x] = Math.min(x0s[x]! + 1, srcW - 1)
    fxs[x] = at - x0s[x]!
  }
  const sy = srcH / height
  for (let y = 0; y < height; y++) {
    const at = Math.min(Math.max((y + 0.5) * sy - 0.5, 0), srcH - 1)
    const y0 = Math.floor(at)
    const y1 = Math.min(y0 + 1, srcH - 1)
    const fy = at - y0
    const row0 = y0 * srcW * 3
    const row1 = y1 * srcW * 3
    for (let x = 0; x < width; x++) {
      const a = x0s[x]! * 3
      const b = x1s[x]! * 3
      const fx = fxs[x]!
      const o = (y * width + x) * 3
      for (let c = 0; c < 3; c++) {
        const top = src[row0 + a + c]! + (src[row0 + b + c]! - src[row0 + a + c]!) * fx
        const bottom = src[row1 + a + c]! + (src[row1 + b + c]! - src[row1 + a + c]!) * fx
        out[o + c] = Math.round(top + (bottom - top) * fy)
      }
    }
  }
  return { width, height, data: out }
}
