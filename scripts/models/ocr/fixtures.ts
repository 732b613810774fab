/**
 * The OCR direction-classifier test images, built in memory.
 *
 * For each string: an upright grayscale PNG and the same image rotated 180
 * degrees; for the first string also RGB JPEGs of both. The manifest lists
 * every file with its expected angle. The output is deterministic (bitmap
 * font, no randomness, and the fast-png and jpeg-js encoders are
 * deterministic), so a test can rebuild it and compare with the committed
 * files.
 */
import { encode as encodePng } from 'fast-png'
import jpeg from 'jpeg-js'
import type { RgbImage } from '../../../examples/ocr-direction/image.js'
import { renderTextLine, rotate180, type RenderOptions } from './render-text.js'

/**
 * Scale 3 with 1 px of extra stroke gives a 40 px tall line, close to the
 * classifier's 48 px input. Thinner 1-2x renderings were also classified
 * correctly, but with less margin on hard strings (see README).
 */
export const FIXTURE_RENDER: Partial<RenderOptions> = { scale: 3, bold: 1, margin: 6 }
export const FIXTURE_TEXTS = ['The quick brown fox 12345', 'Hello, World!', 'Invoice No. 2024-0187'] as const
const JPEG_QUALITY = 85

export interface ManifestEntry {
  file: string
  text: string
  angle: 0 | 180
  width: number
  height: number
  bytes: number
}

export interface OcrManifest {
  render: Partial<RenderOptions>
  images: ManifestEntry[]
}

export interface OcrFixtures {
  files: Map<string, Uint8Array>
  manifest: OcrManifest
}

const slug = (t: string): string =>
  t
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')

function toGrayPng(img: RgbImage): Uint8Array {
  // The renderer only produces gray, so keep one channel: about 3x smaller files.
  const gray = new Uint8Array(img.width * img.height)
  for (let i = 0; i < gray.length; i++) gray[i] = img.data[i * 3]!
  return encodePng({ width: img.width, height: img.height, data: gray, channels: 1, depth: 8 })
}

function toJpeg(img: RgbImage): Uint8Array {
  // jpeg-js takes RGBA input.
  const rgba = new Uint8Array(img.width * img.height * 4)
  for (let i = 0; i < img.width * img.height; i++) {
    rgba.set(img.data.subarray(i * 3, i * 3 + 3), i * 4)
    rgba[i * 4 + 3] = 255
  }
  return new Uint8Array(jpeg.encode({ width: img.width, height: img.height, data: rgba }, JPEG_QUALITY).data)
}

export function buildOcrFixtures(): OcrFixtures {
  const files = new Map<string, Uint8Array>()
  const images: ManifestEntry[] = []
  const add = (file: string, bytes: Uint8Array, text: string, angle: 0 | 180, img: RgbImage): void => {
    files.set(file, bytes)
    images.push({ file, text, angle, width: img.width, height: img.height, bytes: bytes.length })
  }
  FIXTURE_TEXTS.forEach((text, i) => {
    const upright = renderTextLine(text, FIXTURE_RENDER)
    const flipped = rotate180(upright)
    const name = slug(text)
    add(`${name}.png`, toGrayPng(upright), text, 0, upright)
    add(`${name}.rot180.png`, toGrayPng(flipped), text, 180, flipped)
    if (i === 0) {
      add(`${name}.jpg`, toJpeg(upright), text, 0, upright)
      add(`${name}.rot180.jpg`, toJpeg(flipped), text, 180, flipped)
    }
  })
  const manifest: OcrManifest = { render: FIXTURE_RENDER, images }
  files.set('manifest.json', new TextEncoder().encode(JSON.stringify(manifest, null, 2) + '\n'))
  return { files, manifest }
}
