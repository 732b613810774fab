/**
 * PNG to gray or RGB pixels, in the same code on Node, workerd and browsers
 * (the image data is inflated by the runtime's zlib where it has one, by
 * fflate in browsers: see ./inflate/). Uploads are untrusted, so:
 *  - the size comes from IHDR and is checked before anything is allocated;
 *  - every chunk's CRC is checked, and the file must end with IEND;
 *  - the image data is inflated once, to at most the size IHDR implies: a
 *    small "zlib bomb" cannot make the decoder allocate more, and inflating
 *    stops soon after it passes that size.
 *
 * The usual upload (8- or 16-bit gray, gray+alpha, RGB or RGBA, not
 * interlaced) is unfiltered right here, in that buffer.
 * The rest (palettes, 1/2/4-bit samples, Adam7 interlacing, a tRNS chunk)
 * goes to fast-png once the same checks have passed.
 *
 * Transparent pixels are composited over white: text crops with an alpha
 * channel are almost always dark glyphs on a transparent background.
 */
import { decode as decodeWithFastPng, type DecodedPng } from 'fast-png'
import { inflateAtMost } from '#example-inflate'
import { ImageDecodeError, checkDimensions, messageOf, type DecodedImage } from './pixels.js'

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
// Chunk types, as the big-endian uint32 of their four ASCII letters.
const IHDR = 0x49484452
const IDAT = 0x49444154
const IEND = 0x49454e44
const TRNS = 0x74524e53

export const isPng = (bytes: Uint8Array): boolean => bytes.length >= 8 && SIGNATURE.every((b, i) => bytes[i] === b)

export function decodePng(bytes: Uint8Array): DecodedImage {
  const header = readHeader(bytes)
  const { stream, hasTransparency } = readChunks(bytes)
  const raw = inflateExactly(stream, header.rawBytes)
  const simple = !header.interlaced && header.depth >= 8 && header.colorType !== 3 && !hasTransparency
  if (simple) return flatten(header.width, header.height, header.channels, unfilter(raw, header))
  let png: DecodedPng
  try {
    // The CRCs were checked above, and the stream inflates to what IHDR says.
    png = decodeWithFastPng(bytes)
  } catch (error) {
    throw new ImageDecodeError('corrupt', `invalid PNG: ${messageOf(error)}`, { cause: error })
  }
  return fromFastPng(png)
}

// ---------------------------------------------------------------------------
// Header and chunks

interface Header {
  width: number
  height: number
  /** Bits per sample: 1, 2, 4, 8 or 16. */
  depth: number
  /** 0 gray, 2 RGB, 3 palette, 4 gray+alpha, 6 RGBA. */
  colorType: number
  /** Samples per pixel (a palette index is one). */
  channels: number
  interlaced: boolean
  /** Exact inflated size of the image data: every row with its filter byte. */
  rawBytes: number
}

const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }
const DEPTHS: Record<number, readonly number[]> = { 0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16] }
/** Adam7's seven passes: first column and row, then the steps between them. */
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
] as const

/** Read IHDR, which the PNG spec requires to be the first chunk. */
function readHeader(bytes: Uint8Array): Header {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (bytes.length < 33 || view.getUint32(8) !== 13 || view.getUint32(12) !== IHDR) {
    throw new ImageDecodeError('corrupt', 'invalid PNG: missing IHDR header')
  }
  const width = view.getUint32(16)
  const height = view.getUint32(20)
  checkDimensions('PNG', width, height)
  const depth = bytes[24]!
  const colorType = bytes[25]!
  const channels = CHANNELS[colorType]
  if (channels === undefined || !DEPTHS[colorType]!.includes(depth)) {
    throw new ImageDecodeError('corrupt', `invalid PNG: bit depth ${depth}, color type ${colorType}`)
  }
  if (bytes[26] !== 0 || bytes[27] !== 0 || bytes[28]! > 1) {
    throw new ImageDecodeError('corrupt', `invalid PNG: compression ${bytes[26]}, filter ${bytes[27]}, interlace ${bytes[28]}`)
  }
  const interlaced = bytes[28] === 1
  const bitsPerPixel = depth * channels
  // Each row starts with one filter-type byte.
  const rowSize = (w: number): number => (w === 0 ? 0 : 1 + Math.ceil((w * bitsPerPixel) / 8))
  let rawBytes = height * rowSize(width)
  if (interlaced) {
    rawBytes = 0
    for (const [x0, y0, dx, dy] of ADAM7) {
      const w = Math.ceil((width - x0) / dx)
      const h = Math.ceil((height - y0) / dy)
      if (w > 0 && h > 0) rawBytes += h * rowSize(w)
    }
  }
  return { width, height, depth, colorType, channels, interlaced, rawBytes }
}

const CRC_TABLE = Int32Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c
})

/** CRC-32 of `bytes[start, end)`, as PNG computes it over a chunk's type and data. */
function crc32(bytes: Uint8Array, start: number, end: number): number {
  let c = -1
  for (let i = start; i < end; i++) c = CRC_TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8)
  return (c ^ -1) >>> 0
}

/** Walk the chunks, checking each CRC: the zlib stream (the IDAT payloads, joined), and whether a tRNS chunk came with it. */
function readChunks(bytes: Uint8Array): { stream: Uint8Array; hasTransparency: boolean } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const parts: Uint8Array[] = []
  let hasTransparency = false
  let sawEnd = false
  let offset = 8
  while (offset + 8 <= bytes.length) {
    const length = view.getUint32(offset)
    const type = view.getUint32(offset + 4)
    const dataStart = offset + 8
    const dataEnd = dataStart + length
    if (dataEnd + 4 > bytes.length) break // truncated chunk
    if (crc32(bytes, offset + 4, dataEnd) !== view.getUint32(dataEnd)) {
      const name = String.fromCharCode(...bytes.subarray(offset + 4, offset + 8))
      throw new ImageDecodeError('corrupt', `invalid PNG: CRC mismatch in the ${JSON.stringify(name)} chunk`)
    }
    if (type === IDAT) parts.push(bytes.subarray(dataStart, dataEnd))
    else if (type === TRNS) hasTransparency = true
    else if (type === IEND) {
      sawEnd = true
      break
    }
    offset = dataEnd + 4
  }
  if (!sawEnd) throw new ImageDecodeError('corrupt', 'invalid PNG: file is truncated (no IEND chunk)')
  return { stream: parts.length === 1 ? parts[0]! : join(parts), hasTransparency }
}

function join(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, p) => sum + p.length, 0))
  let offset = 0
  for (const part of parts) {
    out.set(part, offset)
    offset += part.length
  }
  return out
}

// ---------------------------------------------------------------------------
// Inflating

/** Inflate a zlib stream that must produce exactly `expected` bytes. */
function inflateExactly(stream: Uint8Array, expected: number): Uint8Array {
  let out: Uint8Array | undefined
  try {
    out = inflateAtMost(stream, expected)
  } catch (error) {
    throw new ImageDecodeError('corrupt', `invalid PNG: ${messageOf(error)}`, { cause: error })
  }
  if (out === undefined) throw new ImageDecodeError('corrupt', 'invalid PNG: image data is larger than its dimensions allow')
  if (out.length < expected) throw new ImageDecodeError('corrupt', `invalid PNG: image data has ${out.length} bytes, expected ${expected}`)
  return out
}

// ---------------------------------------------------------------------------
// Pixels

/**
 * Undo each row's filter (PNG's none, sub, up, average, Paeth) in place,
 * packing the rows over their filter bytes (a row's pixels only ever move
 * to lower offsets, over bytes already read), and keep 8 bits per sample:
 * 16-bit samples keep their high byte. Returns a view of `raw`: the image
 * costs no second buffer of its size.
 */
function unfilter(raw: Uint8Array, { width, height, depth, channels }: Header): Uint8Array {
  const bpp = (channels * depth) / 8 // bytes per pixel, also the distance to the "left" byte
  const rowBytes = width * bpp
  const rows = raw // written as `rows`, read as `raw`: the same bytes
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (rowBytes + 1)]!
    const src = y * (rowBytes + 1) + 1
    const dst = y * rowBytes
    const up = dst - rowBytes // the row above, already unfiltered and in place (absent for the first row)
    // Uint8Array stores wrap modulo 256, as PNG's arithmetic does.
    if (filter === 0) rows.copyWithin(dst, src, src + rowBytes)
    else if (filter === 1) {
      for (let i = 0; i < rowBytes; i++) rows[dst + i] = raw[src + i]! + (i >= bpp ? rows[dst + i - bpp]! : 0)
    } else if (filter === 2) {
      for (let i = 0; i < rowBytes; i++) rows[dst + i] = raw[src + i]! + (y > 0 ? rows[up + i]! : 0)
    } else if (filter === 3) {
      for (let i = 0; i < rowBytes; i++) {
        const left = i >= bpp ? rows[dst + i - bpp]! : 0
        const above = y > 0 ? rows[up + i]! : 0
        rows[dst + i] = raw[src + i]! + ((left + above) >> 1)
      }
    } else if (filter === 4) {
      for (let i = 0; i < rowBytes; i++) {
        const left = i >= bpp ? rows[dst + i - bpp]! : 0
        const above = y > 0 ? rows[up + i]! : 0
        const aboveLeft = y > 0 && i >= bpp ? rows[up + i - bpp]! : 0
        rows[dst + i] = raw[src + i]! + paeth(left, above, aboveLeft)
      }
    } else throw new ImageDecodeError('corrupt', `invalid PNG: row ${y} has filter type ${filter}`)
  }
  const size = rowBytes * height
  if (depth === 8) return rows.subarray(0, size)
  // 16-bit: the high bytes, packed in place too (sample i moves from 2i to i).
  for (let i = 0; i < size / 2; i++) rows[i] = rows[2 * i]!
  return rows.subarray(0, size / 2)
}

/** The neighbour (left, above or above-left) nearest to left + above - aboveLeft, as PNG's Paeth filter predicts. */
function paeth(left: number, above: number, aboveLeft: number): number {
  const p = left + above - aboveLeft
  const toLeft = Math.abs(p - left)
  const toAbove = Math.abs(p - above)
  const toAboveLeft = Math.abs(p - aboveLeft)
  if (toLeft <= toAbove && toLeft <= toAboveLeft) return left
  return toAbove <= toAboveLeft ? above : aboveLeft
}

/** fast-png's result as 8-bit samples: palettes expanded to RGBA, low bit depths scaled to 0..255. */
function fromFastPng(png: DecodedPng): DecodedImage {
  const { width, height, depth, channels, data, palette } = png
  const pixels = width * height
  if (palette) {
    const rgba = new Uint8Array(pixels * 4)
    for (let p = 0; p < pixels; p++) {
      const entry = palette[sampleAt(png, p, 0)]
      // An index past the palette's end reads as opaque black.
      rgba[p * 4] = entry?.[0] ?? 0
      rgba[p * 4 + 1] = entry?.[1] ?? 0
      rgba[p * 4 + 2] = entry?.[2] ?? 0
      rgba[p * 4 + 3] = entry?.[3] ?? 255
    }
    return flatten(width, height, 4, rgba)
  }
  if (depth === 8) return flatten(width, height, channels, data as Uint8Array)
  const samples = new Uint8Array(pixels * channels)
  if (depth === 16) {
    for (let i = 0; i < samples.length; i++) samples[i] = data[i]! >> 8
  } else {
    // 1/2/4-bit samples exist only for gray (and palettes, above): expand to 0..255.
    const scale = 255 / ((1 << depth) - 1)
    for (let p = 0; p < pixels; p++) samples[p] = Math.round(sampleAt(png, p, 0) * scale)
  }
  return flatten(width, height, channels, samples)
}

/** Sample `channel` of pixel `p` in fast-png's data, unpacking 1/2/4-bit samples from byte-aligned rows. */
function sampleAt({ width, depth, channels, data }: DecodedPng, p: number, channel: number): number {
  if (depth >= 8) return data[p * channels + channel]!
  const y = Math.floor(p / width)
  const bit = (p - y * width) * depth
  const byte = data[y * Math.ceil((width * depth) / 8) + (bit >> 3)]!
  return (byte >> (8 - depth - (bit & 7))) & ((1 << depth) - 1)
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
