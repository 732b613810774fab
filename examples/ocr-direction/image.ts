/**
 * Decode uploaded PNG or JPEG bytes to 8-bit RGB pixels, in pure JavaScript.
 *
 * The decoders are chosen to run unchanged in Node, Cloudflare workerd and
 * browsers (no node:fs, node:zlib, native addons or Buffer):
 *  - fast-png: pure ESM; it inflates with fflate.
 *  - jpeg-js: pure JS; with `useTArray: true` it returns a Uint8Array and never
 *    touches Buffer.
 *
 * Uploads are untrusted, so sizes are checked before anything is allocated:
 * width and height come from the PNG IHDR chunk or the JPEG SOF segment, and
 * a PNG's compressed data is inflated into a byte counter first, so a small
 * "zlib bomb" cannot make the decoder allocate gigabytes.
 *
 * Transparent pixels are composited over white: text crops with an alpha
 * channel are almost always dark glyphs on a transparent background.
 */
import { Unzlib } from 'fflate'
import { decode as decodePngRaw, type DecodedPng } from 'fast-png'
import jpeg from 'jpeg-js'

export interface RgbImage {
  width: number
  height: number
  /** Interleaved R, G, B bytes, row-major, length width*height*3. */
  data: Uint8Array
}

export type ImageFormat = 'png' | 'jpeg'

/** Largest accepted width or height. A text line is resized to 48 px high anyway. */
export const MAX_IMAGE_SIDE = 4096
/** Largest accepted width*height (16 megapixels): about 48 MB of RGB output. */
export const MAX_IMAGE_PIXELS = 16_000_000

/**
 * Why an upload could not be decoded. Every failure of `decodeImage` is an
 * ImageDecodeError, so a server can map the whole class to 422 (or
 * `reason === 'too-large'` to 413) without parsing messages.
 */
export class ImageDecodeError extends Error {
  override readonly name = 'ImageDecodeError'
  constructor(
    readonly reason: 'unsupported' | 'corrupt' | 'too-large',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}

/** The format named by the file's magic bytes, or null for anything else. */
export function sniffFormat(bytes: Uint8Array): ImageFormat | null {
  const png = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
  if (bytes.length >= 8 && png.every((b, i) => bytes[i] === b)) return 'png'
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg'
  return null
}

export function decodeImage(bytes: Uint8Array): RgbImage {
  const format = sniffFormat(bytes)
  if (format === 'png') return decodePng(bytes)
  if (format === 'jpeg') return decodeJpeg(bytes)
  throw new ImageDecodeError('unsupported', 'unsupported image format: expected PNG or JPEG bytes')
}

function checkDimensions(format: string, width: number, height: number): void {
  if (width < 1 || height < 1) throw new ImageDecodeError('corrupt', `invalid ${format}: image is ${width}x${height}`)
  if (width > MAX_IMAGE_SIDE || height > MAX_IMAGE_SIDE || width * height > MAX_IMAGE_PIXELS) {
    throw new ImageDecodeError(
      'too-large',
      `image too large: ${width}x${height} (limit ${MAX_IMAGE_SIDE} px per side and ${MAX_IMAGE_PIXELS / 1e6} megapixels)`,
    )
  }
}

// ---------------------------------------------------------------------------
// PNG

interface PngHeader {
  width: number
  height: number
  /** Exact inflated size of the image data for these dimensions and format. */
  rawBytes: number
}

const PNG_CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }

/** Read IHDR, which the PNG spec requires to be the first chunk. */
function readPngHeader(bytes: Uint8Array): PngHeader {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const isIhdr = bytes.length >= 33 && String.fromCharCode(...bytes.subarray(12, 16)) === 'IHDR'
  if (!isIhdr) throw new ImageDecodeError('corrupt', 'invalid PNG: missing IHDR header')
  const width = view.getUint32(16)
  const height = view.getUint32(20)
  checkDimensions('PNG', width, height)
  const depth = bytes[24] ?? 0
  const channels = PNG_CHANNELS[bytes[25] ?? -1]
  if (channels === undefined || ![1, 2, 4, 8, 16].includes(depth)) {
    throw new ImageDecodeError('corrupt', `invalid PNG: bit depth ${depth}, color type ${bytes[25]}`)
  }
  const bitsPerPixel = depth * channels
  const interlaced = bytes[28] === 1
  // Each row starts with one filter-type byte.
  const rowSize = (w: number): number => (w === 0 ? 0 : 1 + Math.ceil((w * bitsPerPixel) / 8))
  if (!interlaced) return { width, height, rawBytes: height * rowSize(width) }
  // Adam7 stores seven sub-images; sum their sizes.
  const passes = [
    [0, 0, 8, 8],
    [4, 0, 8, 8],
    [0, 4, 4, 8],
    [2, 0, 4, 4],
    [0, 2, 2, 4],
    [1, 0, 2, 2],
    [0, 1, 1, 2],
  ] as const
  let rawBytes = 0
  for (const [x0, y0, dx, dy] of passes) {
    const w = Math.ceil((width - x0) / dx)
    const h = Math.ceil((height - y0) / dy)
    if (w > 0 && h > 0) rawBytes += h * rowSize(w)
  }
  return { width, height, rawBytes }
}

/**
 * Inflate the concatenated IDAT payloads into a counter only, failing as soon
 * as the output exceeds what IHDR promises or if the stream is incomplete.
 * fast-png would otherwise buffer the whole inflated stream, however large.
 */
function checkPngData(bytes: Uint8Array, expected: number): void {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let produced = 0
  let finished = false
  const inflater = new Unzlib((chunk, final) => {
    produced += chunk.length
    if (produced > expected) throw new ImageDecodeError('corrupt', 'invalid PNG: image data is larger than its dimensions allow')
    if (final) finished = true
  })
  let offset = 8
  let sawEnd = false
  while (offset + 8 <= bytes.length) {
    const length = view.getUint32(offset)
    const type = String.fromCharCode(...bytes.subarray(offset + 4, offset + 8))
    const dataStart = offset + 8
    if (dataStart + length + 4 > bytes.length) break // truncated chunk
    if (type === 'IDAT') inflater.push(bytes.subarray(dataStart, dataStart + length))
    if (type === 'IEND') {
      sawEnd = true
      break
    }
    offset = dataStart + length + 4 // skip the CRC
  }
  if (!sawEnd) throw new ImageDecodeError('corrupt', 'invalid PNG: file is truncated (no IEND chunk)')
  inflater.push(new Uint8Array(0), true)
  if (!finished || produced !== expected) {
    throw new ImageDecodeError('corrupt', `invalid PNG: image data has ${produced} bytes, expected ${expected}`)
  }
}

function decodePng(bytes: Uint8Array): RgbImage {
  const header = readPngHeader(bytes)
  let png: DecodedPng
  try {
    checkPngData(bytes, header.rawBytes)
    png = decodePngRaw(bytes, { checkCrc: true })
  } catch (error) {
    if (error instanceof ImageDecodeError) throw error
    throw new ImageDecodeError('corrupt', `invalid PNG: ${describe(error)}`, { cause: error })
  }
  return pngToRgb(png)
}

function pngToRgb(png: DecodedPng): RgbImage {
  const { width, height, channels } = png
  const out = new Uint8Array(width * height * 3)
  const sample = sampler(png)
  const palette = png.palette
  const blend = (c: number, a: number): number => Math.round((c * a + 255 * (255 - a)) / 255)
  for (let i = 0; i < width * height; i++) {
    let r: number
    let g: number
    let b: number
    let a = 255
    if (palette) {
      const entry = palette[sample(i, 0)] ?? [0, 0, 0]
      r = entry[0] ?? 0
      g = entry[1] ?? 0
      b = entry[2] ?? 0
      a = entry[3] ?? 255
    } else if (channels <= 2) {
      r = g = b = sample(i, 0) // gray, possibly with alpha
      if (channels === 2) a = sample(i, 1)
    } else {
      r = sample(i, 0)
      g = sample(i, 1)
      b = sample(i, 2)
      if (channels === 4) a = sample(i, 3)
    }
    if (a !== 255) {
      r = blend(r, a)
      g = blend(g, a)
      b = blend(b, a)
    }
    out[i * 3] = r
    out[i * 3 + 1] = g
    out[i * 3 + 2] = b
  }
  return { width, height, data: out }
}

/**
 * (pixelIndex, channel) -> 8-bit value (or palette index), hiding PNG's
 * storage variants: 16-bit samples are reduced to their high byte, and
 * 1/2/4-bit samples (gray or palette) are unpacked from byte-aligned rows.
 */
function sampler(png: DecodedPng): (pixel: number, channel: number) => number {
  const { width, depth, channels, data } = png
  if (depth === 16) return (p, c) => (data[p * channels + c] ?? 0) >> 8
  if (depth === 8) return (p, c) => data[p * channels + c] ?? 0
  const rowBytes = Math.ceil((width * depth) / 8)
  const mask = (1 << depth) - 1
  // Low bit depths only exist for single-channel (gray or indexed) images.
  const scale = png.palette ? 1 : 255 / mask // expand gray to 0..255
  return (p) => {
    const y = Math.floor(p / width)
    const x = p - y * width
    const bit = x * depth
    const byte = data[y * rowBytes + (bit >> 3)] ?? 0
    const v = (byte >> (8 - depth - (bit & 7))) & mask
    return Math.round(v * scale)
  }
}

// ---------------------------------------------------------------------------
// JPEG

/** SOFn markers carry the frame size; C4 (DHT), C8 (JPG) and CC (DAC) are not frames. */
const isStartOfFrame = (m: number): boolean => m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc

/** Walk the marker segments up to the first SOFn and return its size. */
function readJpegSize(bytes: Uint8Array): { width: number; height: number } {
  let offset = 2 // after SOI
  while (offset + 4 <= bytes.length) {
    if (bytes[offset] !== 0xff) throw new ImageDecodeError('corrupt', 'invalid JPEG: bad marker')
    const marker = bytes[offset + 1] ?? 0
    if (marker === 0xff) {
      offset++ // fill byte
      continue
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      offset += 2 // segments without a length
      continue
    }
    if (marker === 0xda || marker === 0xd9) break // scan data or end before any frame header
    const length = ((bytes[offset + 2] ?? 0) << 8) | (bytes[offset + 3] ?? 0)
    if (isStartOfFrame(marker)) {
      if (offset + 9 > bytes.length) break
      const height = ((bytes[offset + 5] ?? 0) << 8) | (bytes[offset + 6] ?? 0)
      const width = ((bytes[offset + 7] ?? 0) << 8) | (bytes[offset + 8] ?? 0)
      return { width, height }
    }
    if (length < 2) throw new ImageDecodeError('corrupt', 'invalid JPEG: bad segment length')
    offset += 2 + length
  }
  throw new ImageDecodeError('corrupt', 'invalid JPEG: no frame header (truncated or not a JPEG)')
}

function decodeJpeg(bytes: Uint8Array): RgbImage {
  const { width, height } = readJpegSize(bytes)
  checkDimensions('JPEG', width, height)
  try {
    const img = jpeg.decode(bytes, {
      useTArray: true,
      formatAsRGBA: false,
      // Fail on missing data instead of returning a partly gray image.
      tolerantDecoding: false,
      maxResolutionInMP: MAX_IMAGE_PIXELS / 1e6,
    })
    return { width: img.width, height: img.height, data: img.data }
  } catch (error) {
    throw new ImageDecodeError('corrupt', `invalid JPEG: ${describe(error)}`, { cause: error })
  }
}

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error))
