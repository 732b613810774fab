import { encode as encodePng } from 'fast-png'
import { zlibSync } from 'fflate'
import jpeg from 'jpeg-js'
import { describe, expect, it } from 'vitest'
import { ImageDecodeError, MAX_IMAGE_SIDE, decodeImage, sniffFormat, type RgbImage } from '../../../examples/ocr-direction/image.js'
import { renderTextLine } from '../../../scripts/models/ocr/render-text.js'

const src = renderTextLine('Decode me 0123', { scale: 2, bold: 0, margin: 3, smooth: false })
const { width, height } = src
const n = width * height
const gray = Uint8Array.from({ length: n }, (_, i) => src.data[i * 3]!)
const grayPng = encodePng({ width, height, data: gray, channels: 1, depth: 8 })

function rgba(alpha: (i: number) => number): Uint8Array {
  return Uint8Array.from({ length: 4 * n }, (_, i) => (i % 4 === 3 ? alpha(i >> 2) : gray[i >> 2]!))
}

function maxError(a: RgbImage, b: RgbImage): number {
  expect([a.width, a.height, a.data.length]).toEqual([b.width, b.height, b.data.length])
  let max = 0
  for (let i = 0; i < a.data.length; i++) max = Math.max(max, Math.abs(a.data[i]! - b.data[i]!))
  return max
}

function meanError(a: RgbImage, b: RgbImage): number {
  let sum = 0
  for (let i = 0; i < a.data.length; i++) sum += Math.abs(a.data[i]! - b.data[i]!)
  return sum / a.data.length
}

/** The error decodeImage throws for `bytes` (fails the test if it does not throw). */
function decodeError(bytes: Uint8Array): ImageDecodeError {
  try {
    decodeImage(bytes)
  } catch (error) {
    expect(error).toBeInstanceOf(ImageDecodeError)
    return error as ImageDecodeError
  }
  throw new Error('decodeImage did not throw')
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

/** A PNG chunk with a correct CRC. */
function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length)
  const view = new DataView(out.buffer)
  view.setUint32(0, data.length)
  out.set(new TextEncoder().encode(type), 4)
  out.set(data, 8)
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)))
  return out
}

/** A well-formed 8-bit gray PNG whose IHDR says width x height and whose IDAT holds `raw`, zlib-compressed. */
function craftPng(w: number, h: number, raw: Uint8Array): Uint8Array {
  const ihdr = new Uint8Array(13)
  new DataView(ihdr.buffer).setUint32(0, w)
  new DataView(ihdr.buffer).setUint32(4, h)
  ihdr.set([8, 0, 0, 0, 0], 8) // depth 8, gray, deflate, adaptive filter, no interlace
  const parts = [
    Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlibSync(raw)),
    chunk('IEND', new Uint8Array(0)),
  ]
  const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0))
  let offset = 0
  for (const p of parts) {
    out.set(p, offset)
    offset += p.length
  }
  return out
}

describe('decodeImage: PNG and JPEG variants', () => {
  const variants: [string, Uint8Array][] = [
    ['gray8', grayPng],
    ['gray+alpha', encodePng({ width, height, data: Uint8Array.from({ length: 2 * n }, (_, i) => (i % 2 ? 255 : gray[i >> 1]!)), channels: 2, depth: 8 })],
    ['rgb8', encodePng({ width, height, data: src.data, channels: 3, depth: 8 })],
    ['rgba8', encodePng({ width, height, data: rgba(() => 255), channels: 4, depth: 8 })],
    ['gray16', encodePng({ width, height, data: Uint16Array.from(gray, (g) => g * 257), channels: 1, depth: 16 })],
  ]
  it.each(variants)('PNG %s decodes to the exact source pixels', (_, bytes) => {
    expect(sniffFormat(bytes)).toBe('png')
    expect(maxError(decodeImage(bytes), src)).toBe(0)
  })

  it('unpacks 1-bit gray PNG rows', () => {
    const rowBytes = Math.ceil(width / 8)
    const packed = new Uint8Array(rowBytes * height)
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) if (gray[y * width + x]! >= 128) packed[y * rowBytes + (x >> 3)]! |= 0x80 >> (x & 7)
    }
    const bytes = encodePng({ width, height, data: packed, channels: 1, depth: 1 })
    const expected = { width, height, data: Uint8Array.from(src.data, (v) => (v >= 128 ? 255 : 0)) }
    expect(maxError(decodeImage(bytes), expected)).toBe(0)
  })

  it('composites transparent pixels over white', () => {
    const bytes = encodePng({ width, height, data: rgba(() => 0), channels: 4, depth: 8 })
    expect(decodeImage(bytes).data.every((v) => v === 255)).toBe(true)
  })

  it('decodes a JPEG to RGB close to the source', () => {
    const bytes = new Uint8Array(jpeg.encode({ width, height, data: rgba(() => 255) }, 90).data)
    expect(sniffFormat(bytes)).toBe('jpeg')
    const img = decodeImage(bytes)
    expect(img.data.length).toBe(n * 3)
    expect(meanError(img, src)).toBeLessThan(3)
  })
})

describe('decodeImage: rejects what it cannot decode safely', () => {
  it('refuses bytes that are not PNG or JPEG', () => {
    for (const bytes of [new Uint8Array(0), new TextEncoder().encode('hello, world'), new TextEncoder().encode('GIF89a\x01\x00\x01\x00')]) {
      const error = decodeError(bytes)
      expect(error.reason).toBe('unsupported')
      expect(error.message).toMatch(/expected PNG or JPEG/)
    }
  })

  it('refuses truncated PNGs, wherever they are cut', () => {
    for (const length of [8, 20, 40, grayPng.length >> 1, grayPng.length - 12, grayPng.length - 1]) {
      const error = decodeError(grayPng.slice(0, length))
      expect(error.reason).toBe('corrupt')
      expect(error.message).toMatch(/^invalid PNG: /)
    }
  })

  it('refuses a PNG whose image data was altered (CRC mismatch)', () => {
    const bytes = grayPng.slice()
    bytes[bytes.length - 20]! ^= 0xff // inside the last IDAT chunk
    expect(decodeError(bytes).message).toMatch(/^invalid PNG: /)
  })

  it('refuses a PNG whose data stream is shorter than its header promises', () => {
    const bytes = craftPng(100, 100, new Uint8Array(50 * 101))
    expect(decodeError(bytes).message).toMatch(/image data has 5050 bytes, expected 10100/)
  })

  it('reads oversized dimensions from the header, before decoding anything', () => {
    for (const [w, h] of [
      [MAX_IMAGE_SIDE + 1, 1],
      [1, 100_000],
      [4000, 4001], // each side fits, but 16.004 megapixels does not
      [0xffffffff, 0xffffffff],
    ] as const) {
      const bytes = craftPng(w, h, new Uint8Array(1)) // far too little data for the claimed size
      const error = decodeError(bytes)
      expect(error.reason).toBe('too-large')
      expect(error.message).toContain(`image too large: ${w}x${h}`)
    }
  })

  it('stops inflating a small PNG that expands beyond its dimensions (zlib bomb)', () => {
    const bytes = craftPng(1, 1, new Uint8Array(16 * 1024 * 1024)) // 16 MiB of zeros, about 16 KB compressed
    expect(bytes.length).toBeLessThan(50_000)
    expect(decodeError(bytes).message).toMatch(/larger than its dimensions allow/)
  })

  it('refuses a JPEG whose frame header claims more than the limit', () => {
    const small = new Uint8Array(jpeg.encode({ width: 8, height: 8, data: new Uint8Array(256).fill(255) }, 90).data)
    // Patch the SOF0 segment's height and width fields (big-endian, after the marker, length and precision).
    const sof = small.findIndex((b, i) => b === 0xff && small[i + 1] === 0xc0)
    expect(sof).toBeGreaterThan(0)
    const bytes = small.slice()
    new DataView(bytes.buffer).setUint16(sof + 5, 5000)
    new DataView(bytes.buffer).setUint16(sof + 7, 5000)
    const error = decodeError(bytes)
    expect(error.reason).toBe('too-large')
    expect(error.message).toContain('5000x5000')
  })

  it('refuses truncated JPEGs', () => {
    const bytes = new Uint8Array(jpeg.encode({ width, height, data: rgba(() => 255) }, 90).data)
    for (const length of [3, 20, bytes.length >> 1]) {
      const error = decodeError(bytes.slice(0, length))
      expect(error.reason).toBe('corrupt')
      expect(error.message).toMatch(/^invalid JPEG: /)
    }
  })
})
