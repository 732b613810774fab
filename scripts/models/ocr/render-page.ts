/**
 * Whole pages for the OCR pipeline's tests: text lines drawn with the
 * embedded bitmap font at given places on a blank page.
 */
import type { RgbImage } from '../../../examples/ocr-direction/image.js'
import { renderTextLine, type RenderOptions } from './render-text.js'

export interface PlacedText {
  text: string
  x: number
  y: number
  /** Anchor the line's right edge at x instead of its left (prices at a receipt's margin). */
  alignRight?: boolean
  style?: Partial<RenderOptions>
}

export function renderPage(width: number, height: number, items: readonly PlacedText[], paper = 235): RgbImage {
  const data = new Uint8Array(width * height * 3).fill(paper)
  for (const item of items) {
    const line = renderTextLine(item.text, { margin: 0, paper, ...item.style })
    const left = item.alignRight ? item.x - line.width : item.x
    for (let y = 0; y < line.height; y++) {
      const py = item.y + y
      if (py < 0 || py >= height) continue
      for (let x = 0; x < line.width; x++) {
        const px = left + x
        if (px < 0 || px >= width) continue
        data.set(line.data.subarray((y * line.width + x) * 3, (y * line.width + x) * 3 + 3), (py * width + px) * 3)
      }
    }
  }
  return { width, height, data }
}

/** Deterministic speckle: each pixel moved by up to `amount` gray levels (a fixed linear congruential sequence). */
export function addNoise(img: RgbImage, amount: number, seed = 12345): RgbImage {
  let state = seed >>> 0
  const data = new Uint8Array(img.data.length)
  for (let i = 0; i < img.width * img.height; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0
    const delta = Math.round(((state / 2 ** 32) * 2 - 1) * amount)
    for (let c = 0; c < 3; c++) data[i * 3 + c] = Math.max(0, Math.min(255, img.data[i * 3 + c]! + delta))
  }
  return { width: img.width, height: img.height, data }
}
