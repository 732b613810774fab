/**
 * Cutting a detected text line out of the page, as PaddleOCR's
 * get_rotate_crop_image does: the quad is mapped onto an upright rectangle
 * as wide and tall as the quad's longer opposite sides (edge pixels
 * repeated where it leaves the page), and a crop at least 1.5 times taller
 * than wide is turned a quarter to lie flat.
 */
import type { RgbImage } from '../ocr-direction/image.js'
import { quadSize, type Quad } from './geometry.js'

export function cropQuad(page: RgbImage, quad: Quad): RgbImage {
  const size = quadSize(quad)
  const width = Math.max(1, Math.floor(size.width))
  const height = Math.max(1, Math.floor(size.height))
  const [tl, tr, , bl] = quad
  // A rectangle's corners fix an affine map: out (u, v) -> tl + u * across + v * down.
  const ax = (tr[0] - tl[0]) / width
  const ay = (tr[1] - tl[1]) / width
  const dx = (bl[0] - tl[0]) / height
  const dy = (bl[1] - tl[1]) / height
  const out = new Uint8Array(width * height * 3)
  const { data, width: pw, height: ph } = page
  for (let v = 0; v < height; v++) {
    for (let u = 0; u < width; u++) {
      const sx = Math.min(pw - 1, Math.max(0, tl[0] + u * ax + v * dx))
      const sy = Math.min(ph - 1, Math.max(0, tl[1] + u * ay + v * dy))
      const x0 = Math.floor(sx)
      const y0 = Math.floor(sy)
      const x1 = Math.min(pw - 1, x0 + 1)
      const y1 = Math.min(ph - 1, y0 + 1)
      const fx = sx - x0
      const fy = sy - y0
      for (let c = 0; c < 3; c++) {
        const p00 = data[(y0 * pw + x0) * 3 + c]!
        const p01 = data[(y0 * pw + x1) * 3 + c]!
        const p10 = data[(y1 * pw + x0) * 3 + c]!
        const p11 = data[(y1 * pw + x1) * 3 + c]!
        const top = p00 + (p01 - p00) * fx
        const bottom = p10 + (p11 - p10) * fx
        out[(v * width + u) * 3 + c] = Math.round(top + (bottom - top) * fy)
      }
    }
  }
  const crop = { width, height, data: out }
  return height / width >= 1.5 ? rotateQuarterLeft(crop) : crop
}

/** Rotate 90 degrees counter-clockwise (numpy's rot90). */
function rotateQuarterLeft(img: RgbImage): RgbImage {
  const { width, height, data } = img
  const out = new Uint8Array(data.length)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      // (x, y) moves to (y, width - 1 - x) in a height-wide image.
      const to = ((width - 1 - x) * height + y) * 3
      out.set(data.subarray((y * width + x) * 3, (y * width + x) * 3 + 3), to)
    }
  }
  return { width: height, height: width, data: out }
}

/** Turn a crop upside down, as PaddleOCR does when the direction classifier says 180. */
export function rotateHalf(img: RgbImage): RgbImage {
  const n = img.width * img.height
  const out = new Uint8Array(n * 3)
  for (let i = 0; i < n; i++) out.set(img.data.subarray(i * 3, i * 3 + 3), (n - 1 - i) * 3)
  return { width: img.width, height: img.height, data: out }
}
