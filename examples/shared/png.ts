/**
 * PNG to gray or RGB pixels with fast-png, in the same code on Node, workerd
 * and browsers. fast-png does the decoding (its inflate is fflate's); what
 * is here is what an upload from a stranger needs around it:
 *  - the size is read from IHDR and checked before anything is allocated;
 *  - image data that could inflate to far more than that size (a "zlib
 *    bomb") is inflated once first, only counting, and refused as soon as it
 *    passes the size;
 *  - a file cut short, the usual broken upload, is named as such, and so
 *    is image data that ends before the last row;
 *  - every failure is an ImageDecodeError (see ./pixels.ts).
 *
 * Every PNG becomes 8 bits per sample, gray or RGB: palettes are expanded,
 * 16-bit samples keep their high byte, 1/2/4-bit gray is scaled to 0..255,
 * and transparent pixels are composited over white (text crops with an
 * alpha channel are almost always dark glyphs on a transparent background).
 */
import { Unzlib } from 'fflate'
import { convertIndexedToRgb, decode, hasPngSignature, type DecodedPng } from 'fast-png'
import { ImageDecodeError, checkDimensions, messageOf, type DecodedImage } from './pixels.js'

export const isPng = (bytes: Uint8Array): boolean => hasPngSignature(bytes)

export function decodePng(bytes: Uint8Array): DecodedImage {
  const layout = readLayout(bytes)
  refuseZlibBomb(layout.compressed, layout.maxImageData)
  try {
    return toPixels(decode(bytes, { checkCrc: true }))
  } catch (error) {
    throw new ImageDecodeError('corrupt', `invalid PNG: ${shortImageData(layout) ?? messageOf(error)}`, { cause: error })
  }
}

// ---------------------------------------------------------------------------
// Before decoding: the size, and the compressed image data

/** Samples per pixel for each colour type: 0 gray, 2 RGB, 3 palette, 4 gray + alpha, 6 RGBA. */
const SAMPLES_PER_PIXEL: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }

interface Layout {
  width: number
  height: number
  /** Bits per pixel; undefined if IHDR names a bit depth or colour type that PNG does not have. */
  bitsPerPixel: number | undefined
  /** Whether the rows are Adam7-interlaced. */
  interlaced: boolean
  /** More than the image data can inflate to in a valid file of this size (see below). */
  maxImageData: number
  /** The IDAT chunks' payloads: the zlib stream, in pieces. */
  compressed: Uint8Array[]
}

/** Read IHDR (the PNG spec requires it first) and find the IDAT chunks, checking the size against the limits. */
function readLayout(bytes: Uint8Array): Layout {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const IHDR = 0x49484452 // the chunk type's four ASCII letters, big-endian
  // A file too short for IHDR is one cut short, unless what it has of IHDR's length and type is wrong.
  const hasIhdrStart = bytes.length < 16 || (view.getUint32(8) === 13 && view.getUint32(12) === IHDR)
  if (!hasIhdrStart) throw new ImageDecodeError('corrupt', 'invalid PNG: missing IHDR header')
  if (bytes.length < 33) throw truncated('inside its IHDR chunk')
  const width = view.getUint32(16)
  const height = view.getUint32(20)
  checkDimensions('PNG', width, height)
  const depth = bytes[24]!
  const samples = SAMPLES_PER_PIXEL[bytes[25]!]
  const bitsPerPixel = samples !== undefined && [1, 2, 4, 8, 16].includes(depth) ? depth * samples : undefined
  // Each row is its pixels and a filter byte. Adam7 interlacing splits the
  // image into seven passes whose rows have a filter byte each too: never
  // as much again as the plain layout, so twice it bounds both. At most 64
  // bits a pixel (16-bit RGBA) for a format PNG does not have: fast-png
  // refuses those anyway.
  const maxImageData = 2 * height * (1 + Math.ceil((width * (bitsPerPixel ?? 64)) / 8))
  const compressed: Uint8Array[] = []
  let palette = false
  // Every chunk whole, up to IEND: an upload cut short fails here, named as such.
  for (let offset = 8; ;) {
    if (offset + 8 > bytes.length) throw truncated(offset === bytes.length ? 'before its IEND chunk' : 'inside a chunk header')
    const length = view.getUint32(offset)
    const type = String.fromCharCode(...bytes.subarray(offset + 4, offset + 8))
    if (offset + 12 + length > bytes.length) throw truncated(/^[A-Za-z]{4}$/.test(type) ? `inside its ${type} chunk` : 'inside a chunk')
    if (type === 'PLTE') palette = true
    if (type === 'IDAT') compressed.push(bytes.subarray(offset + 8, offset + 8 + length))
    if (type === 'IEND') break
    offset += 12 + length
  }
  // fast-png decodes a palette image without its palette to colours of its own making.
  if (bytes[25] === 3 && !palette) throw new ImageDecodeError('corrupt', 'invalid PNG: a palette image (colour type 3) without its PLTE chunk')
  return { width, height, bitsPerPixel, interlaced: bytes[28] === 1, maxImageData, compressed }
}

const truncated = (where: string): ImageDecodeError => new ImageDecodeError('corrupt', `invalid PNG: the file is cut short: it ends ${where}`)

/** The Adam7 passes: where each starts in an 8x8 block, and its step across and down. */
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
] as const

/** The bytes a valid file's image data inflates to: each row's pixels after a filter byte, in each pass if interlaced. */
function imageDataBytes(width: number, height: number, bitsPerPixel: number, interlaced: boolean): number {
  const rows = (w: number, h: number): number => (w === 0 || h === 0 ? 0 : h * (1 + Math.ceil((w * bitsPerPixel) / 8)))
  if (!interlaced) return rows(width, height)
  let total = 0
  for (const [x0, y0, dx, dy] of ADAM7) total += rows(Math.ceil((width - x0) / dx), Math.ceil((height - y0) / dy))
  return total
}

/**
 * Why a file failed to decode, when the reason is a whole zlib stream that
 * holds too few rows: fast-png reports that only as a missing filter byte.
 * Undefined for any other failure, whose message fast-png words well. Runs
 * only after a failure, so inflating again costs a valid image nothing; the
 * data passed refuseZlibBomb, so it inflates to little.
 */
function shortImageData({ width, height, bitsPerPixel, interlaced, compressed }: Layout): string | undefined {
  if (bitsPerPixel === undefined) return undefined
  let inflated: number
  try {
    inflated = inflatedBytes(compressed, Infinity)
  } catch {
    return undefined
  }
  const expected = imageDataBytes(width, height, bitsPerPixel, interlaced)
  if (inflated >= expected) return undefined
  return `its image data ends before its last row: ${inflated} bytes where ${width}x${height} pixels need ${expected}`
}

/** Deflate's densest code (a 258-byte match in 2 bits) expands data at most 1032 times. */
const MAX_DEFLATE_RATIO = 1032
/** What inflating a stream costs at worst without a check: a few milliseconds, a few megabytes. */
const UNCHECKED_OUTPUT = 4 * 1024 * 1024
/** Compressed bytes per step of inflating: each step inflates at most ~1 MB. */
const SLICE = 1024

/**
 * Refuse image data that inflates to more than `limit` bytes, stopping soon
 * after it passes: fast-png would inflate all of it, however large. Data too
 * short to inflate to much (every text line's) skips the check; the rest is
 * inflated twice, here only counting.
 */
function refuseZlibBomb(compressed: Uint8Array[], limit: number): void {
  const compressedBytes = compressed.reduce((sum, part) => sum + part.length, 0)
  if (compressedBytes * MAX_DEFLATE_RATIO <= Math.max(2 * limit, UNCHECKED_OUTPUT)) return
  let produced: number
  try {
    produced = inflatedBytes(compressed, limit)
  } catch (error) {
    throw new ImageDecodeError('corrupt', `invalid PNG: ${messageOf(error)}`, { cause: error })
  }
  if (produced > limit) throw new ImageDecodeError('corrupt', 'invalid PNG: image data is larger than its dimensions allow')
}

/**
 * How many bytes the image data inflates to, only counting them, and
 * stopping soon after `limit`. Throws for data that is not a zlib stream,
 * or one cut short.
 */
function inflatedBytes(compressed: Uint8Array[], limit: number): number {
  let produced = 0
  const inflater = new Unzlib((chunk) => {
    produced += chunk.length
  })
  for (const part of compressed) {
    for (let at = 0; at < part.length && produced <= limit; at += SLICE) inflater.push(part.subarray(at, at + SLICE))
  }
  if (produced <= limit) inflater.push(new Uint8Array(0), true)
  return produced
}

// ---------------------------------------------------------------------------
// After decoding: 8-bit gray or RGB

/** fast-png's result as 8-bit samples, gray or RGB. */
function toPixels(png: DecodedPng): DecodedImage {
  const { width, height, depth, channels, data } = png
  if (png.palette) {
    // RGB, or RGBA when a tRNS chunk gave the palette alpha.
    const colors = convertIndexedToRgb(png)
    return flatten(width, height, colors.length / (width * height), colors)
  }
  if (depth === 8) return flatten(width, height, channels, data as Uint8Array)
  if (depth === 16)
    return flatten(
      width,
      height,
      channels,
      Uint8Array.from(data, (sample) => sample >> 8),
    )
  // 1, 2 or 4 bits: only gray has them (palettes are above). Rows are packed, each starting on a byte.
  const rowBytes = Math.ceil((width * depth) / 8)
  const scale = 255 / ((1 << depth) - 1)
  const gray = new Uint8Array(width * height)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const bit = x * depth
      const sample = (data[y * rowBytes + (bit >> 3)]! >> (8 - depth - (bit & 7))) & ((1 << depth) - 1)
      gray[y * width + x] = Math.round(sample * scale)
    }
  }
  return { width, height, channels: 1, data: gray }
}

/** 8-bit samples with `channels` per pixel as gray or RGB, compositing any alpha over white. */
function flatten(width: number, height: number, channels: number, samples: Uint8Array): DecodedImage {
  if (channels === 1) return { width, height, channels: 1, data: samples }
  if (channels === 3) return { width, height, data: samples }
  const color = channels - 1 // 1 (gray) or 3 (RGB), followed by alpha
  const out = new Uint8Array(width * height * color)
  for (let s = 0, o = 0; o < out.length; s += channels) {
    const alpha = samples[s + color]!
    for (let c = 0; c < color; c++, o++) {
      const v = samples[s + c]!
      out[o] = alpha === 255 ? v : Math.round((v * alpha + 255 * (255 - alpha)) / 255)
    }
  }
  return color === 1 ? { width, height, channels: 1, data: out } : { width, height, data: out }
}
