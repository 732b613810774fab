/**
 * Rasterize one line of text with the embedded bitmap font.
 *
 * Output is an RgbImage (gray values repeated in R, G, B) so fixtures go
 * through exactly the same path as decoded photos. Rendering is fully
 * deterministic: no fonts, no canvas, no randomness.
 */
import type { RgbImage } from '../../../examples/ocr-direction/image.js'
import { GLYPHS, GLYPH_HEIGHT, GLYPH_WIDTH } from './bitmap-font.js'

export interface RenderOptions {
  /** Output pixels per font pixel. */
  scale: number
  /** Extra pixels each ink dot is grown right and down (stroke weight). */
  bold: number
  /** Blank border in output pixels on every side. */
  margin: number
  /** Gap between glyph cells, in font pixels. */
  tracking: number
  ink: number // 0..255 gray of the text
  paper: number // 0..255 gray of the background
  /** 3x3 box blur, softening edges like a scanned or photographed line. */
  smooth: boolean
}

export const DEFAULT_RENDER: RenderOptions = { scale: 4, bold: 1, margin: 8, tracking: 1, ink: 30, paper: 235, smooth: true }

export function renderTextLine(text: string, options: Partial<RenderOptions> = {}): RgbImage {
  const o = { ...DEFAULT_RENDER, ...options }
  const chars = Array.from(text)
  const cellW = (GLYPH_WIDTH + o.tracking) * o.scale
  const width = chars.length * cellW - o.tracking * o.scale + o.bold + 2 * o.margin
  const height = GLYPH_HEIGHT * o.scale + o.bold + 2 * o.margin
  // Coverage mask: 1 = ink.
  const mask = new Uint8Array(width * height)
  chars.forEach((ch, i) => {
    const glyph = GLYPHS.get(ch)
    if (!glyph) throw new Error(`no glyph for ${JSON.stringify(ch)}`)
    const x0 = o.margin + i * cellW
    for (let gy = 0; gy < GLYPH_HEIGHT; gy++) {
      for (let gx = 0; gx < GLYPH_WIDTH; gx++) {
        if (!glyph[gy]?.[gx]) continue
        const px = x0 + gx * o.scale
        const py = o.margin + gy * o.scale
        for (let y = py; y < py + o.scale + o.bold; y++) mask.fill(1, y * width + px, y * width + px + o.scale + o.bold)
      }
    }
  })
  let gray: Float32Array = Float32Array.from(mask, (m) => (m ? o.ink : o.paper))
  if (o.smooth) gray = boxBlur3(gray, width, height)
  const data = new Uint8Array(width * height * 3)
  for (let i = 0; i < gray.length; i++) data.fill(Math.round(gray[i]!), i * 3, i * 3 + 3)
  return { width, height, data }
}

function boxBlur3(src: Float32Array, w: number, h: number): Float32Array {
  const out = new Float32Array(src.length)
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      let s = 0
      let n = 0
      for (let dy = -1; dy <= 1; dy++) {
        for (let dx = -1; dx <= 1; dx++) {
          const yy = y + dy
          const xx = x + dx
          if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue
          s += src[yy * w + xx]!
          n++
        }
      }
      out[y * w + x] = s / n
    }
  }
  return out
}

/** Rotate by 180 degrees (reverse pixel order), as cv2.rotate(img, 1) does. */
export function rotate180(img: RgbImage): RgbImage {
  const n = img.width * img.height
  const data = new Uint8Array(n * 3)
  for (let i = 0; i < n; i++) {
    const j = n - 1 - i
    data.set(img.data.subarray(i * 3, i * 3 + 3), j * 3)
  }
  return { width: img.width, height: img.height, data }
}
