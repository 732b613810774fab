import { encode as encodePng } from 'fast-png'
import { zlibSync } from 'fflate'
import jpeg from 'jpeg-js'
import { describe, expect, it } from 'vitest'
import { ImageDecodeError, MAX_IMAGE_SIDE, decodeImage, sniffFormat, type DecodedImage, type RgbImage } from '../../../examples/ocr-direction/image.js'
import { readFileSync } from 'node:fs'
import type { OcrManifest } from '../../../scripts/models/ocr/fixtures.js'
import { renderTextLine, rotate180 } from '../../../scripts/models/ocr/render-text.js'
import { seededBytes } from '../../support/prng.js'
import { craftPng as craftRawPng, pngChunk, type PngParts } from '../../support/png.js'

const src = renderTextLine('Decode me 0123', { scale: 2, bold: 0, margin: 3, smooth: false })
const { width, height } = src
const n = width * height
const gray = Uint8Array.from({ length: n }, (_, i) => src.data[i * 3]!)
const grayPng = encodePng({ width, height, data: gray, channels: 1, depth: 8 })

function rgba(alpha: (i: number) => number): Uint8Array {
  return Uint8Array.from({ length: 4 * n }, (_, i) => (i % 4 === 3 ? alpha(i >> 2) : gray[i >> 2]!))
}

/** A gray image as RGB (each gray byte three times), to compare with RGB sources. */
function asRgb(img: DecodedImage): RgbImage {
  if (img.channels !== 1) return img
  return { width: img.width, height: img.height, data: Uint8Array.from({ length: img.data.length * 3 }, (_, i) => img.data[Math.floor(i / 3)]!) }
}

function maxError(decoded: DecodedImage, expected: DecodedImage): number {
  const a = asRgb(decoded)
  const b = asRgb(expected)
  expect([a.width, a.height, a.data.length]).toEqual([b.width, b.height, b.data.length])
  let max = 0
  for (let i = 0; i < a.data.length; i++) max = Math.max(max, Math.abs(a.data[i]! - b.data[i]!))
  return max
}

function meanError(decoded: DecodedImage, expected: RgbImage): number {
  const a = asRgb(decoded)
  const b = expected
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

/** A well-formed PNG (8-bit gray unless told) whose IHDR says w x h and whose IDAT holds `raw`, zlib-compressed. */
const craftPng = (w: number, h: number, raw: Uint8Array, parts?: PngParts): Uint8Array => craftRawPng(w, h, zlibSync(raw), parts)

/** The PNG spec's Paeth predictor, written out here as the reference for the decoder's. */
function paethPredictor(a: number, b: number, c: number): number {
  const p = a + b - c
  const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)]
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c
}

/** Filter packed rows as a PNG encoder would, row y with `types[y % types.length]` (0 none, 1 sub, 2 up, 3 average, 4 Paeth). */
function filterRows(packed: Uint8Array, rowBytes: number, bpp: number, types: readonly number[]): Uint8Array {
  const rows = packed.length / rowBytes
  const raw = new Uint8Array(rows * (rowBytes + 1))
  for (let y = 0; y < rows; y++) {
    const type = types[y % types.length]!
    raw[y * (rowBytes + 1)] = type
    for (let i = 0; i < rowBytes; i++) {
      const at = (row: number, col: number) => (row >= 0 && col >= 0 ? packed[row * rowBytes + col]! : 0)
      const [left, up, upLeft] = [at(y, i - bpp), at(y - 1, i), at(y - 1, i - bpp)]
      const predicted = [0, left, up, (left + up) >> 1, paethPredictor(left, up, upLeft)][type]!
      raw[y * (rowBytes + 1) + 1 + i] = (packed[y * rowBytes + i]! - predicted) & 0xff
    }
  }
  return raw
}

const overWhite = (c: number, a: number): number => Math.round((c * a + 255 * (255 - a)) / 255)

describe('decodeImage: PNG and JPEG variants', () => {
  const variants: [string, Uint8Array, 1 | 3][] = [
    ['gray8', grayPng, 1],
    ['gray+alpha', encodePng({ width, height, data: Uint8Array.from({ length: 2 * n }, (_, i) => (i % 2 ? 255 : gray[i >> 1]!)), channels: 2, depth: 8 }), 1],
    ['rgb8', encodePng({ width, height, data: src.data, channels: 3, depth: 8 }), 3],
    ['rgba8', encodePng({ width, height, data: rgba(() => 255), channels: 4, depth: 8 }), 3],
    ['gray16', encodePng({ width, height, data: Uint16Array.from(gray, (g) => g * 257), channels: 1, depth: 16 }), 1],
    ['rgb16', encodePng({ width, height, data: Uint16Array.from(src.data, (v) => v * 257 + 3), channels: 3, depth: 16 }), 3],
    ['gray8, Adam7 interlaced', encodePng({ width, height, data: gray, channels: 1, depth: 8 }, { interlace: 'Adam7' }), 1],
    ['rgba8, Adam7 interlaced', encodePng({ width, height, data: rgba(() => 255), channels: 4, depth: 8 }, { interlace: 'Adam7' }), 3],
  ]
  it.each(variants)('PNG %s decodes to the exact source pixels', (_, bytes, channels) => {
    expect(sniffFormat(bytes)).toBe('png')
    const decoded = decodeImage(bytes)
    expect(decoded.channels ?? 3).toBe(channels) // gray stays gray: a third of the bytes
    expect(maxError(decoded, src)).toBe(0)
  })

  it('undoes every PNG row filter, for every pixel size from 1 to 8 bytes', () => {
    const w = 13
    const h = 11
    const cases = [
      { colorType: 0, depth: 8, channels: 1 },
      { colorType: 4, depth: 8, channels: 2 },
      { colorType: 2, depth: 8, channels: 3 },
      { colorType: 6, depth: 8, channels: 4 },
      { colorType: 0, depth: 16, channels: 1 },
      { colorType: 2, depth: 16, channels: 3 },
      { colorType: 6, depth: 16, channels: 4 },
    ]
    for (const [k, { colorType, depth, channels }] of cases.entries()) {
      const bpp = (channels * depth) / 8
      const packed = seededBytes(w * h * bpp, 1000 + k)
      // Every filter on some row, each after a row of every other filter.
      const bytes = craftPng(w, h, filterRows(packed, w * bpp, bpp, [1, 4, 2, 0, 3, 4, 1, 3, 2, 4, 0]), { depth, colorType })
      const decoded = decodeImage(bytes)
      // 8 bits per sample (a 16-bit sample keeps its high byte), alpha composited over white.
      const color = channels === 2 || channels === 4 ? channels - 1 : channels
      const expected = new Uint8Array(w * h * color)
      for (let p = 0; p < w * h; p++) {
        const sample = (c: number) => packed[(p * channels + c) * (depth / 8)]!
        const alpha = color < channels ? sample(color) : 255
        for (let c = 0; c < color; c++) expected[p * color + c] = overWhite(sample(c), alpha)
      }
      expect(decoded.channels ?? 3, `color type ${colorType}, depth ${depth}`).toBe(color)
      expect(Buffer.from(decoded.data).equals(Buffer.from(expected)), `color type ${colorType}, depth ${depth}`).toBe(true)
    }
  })

  it('expands palette PNGs, with and without transparency', () => {
    const palette = [
      [0, 0, 0],
      [255, 255, 255],
      [200, 30, 60],
      [10, 120, 250],
    ]
    const indices = Uint8Array.from({ length: n }, (_, i) => (gray[i]! < 128 ? 0 : 1) + (i % 7 === 0 ? 2 : 0))
    const expected = (alpha: number[]) => ({
      width,
      height,
      data: Uint8Array.from({ length: 3 * n }, (_, i) => {
        const index = indices[Math.floor(i / 3)]!
        return overWhite(palette[index]![i % 3]!, alpha[index]!)
      }),
    })
    // Each row: filter byte 0, then the indices.
    const raw = Uint8Array.from({ length: height * (width + 1) }, (_, i) => (i % (width + 1) === 0 ? 0 : indices[i - Math.floor(i / (width + 1)) - 1]!))
    const plte: [string, Uint8Array] = ['PLTE', Uint8Array.from(palette.flat())]
    const opaque = craftPng(width, height, raw, { colorType: 3, before: [plte] })
    expect(maxError(decodeImage(opaque), expected([255, 255, 255, 255]))).toBe(0)
    // tRNS gives alpha to the first entries, in palette order; the rest stay opaque.
    const transparent = craftPng(width, height, raw, { colorType: 3, before: [plte, ['tRNS', Uint8Array.of(255, 0, 128)]] })
    expect(maxError(decodeImage(transparent), expected([255, 0, 128, 255]))).toBe(0)
  })

  it('unpacks 1-bit gray PNG rows', () => {
    const rowBytes = Math.ceil(width / 8)
    const packed = new Uint8Array(rowBytes * height)
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) if (gray[y * width + x]! >= 128) packed[y * rowBytes + (x >> 3)]! |= 0x80 >> (x & 7)
    }
    const bytes = encodePng({ width, height, data: packed, channels: 1, depth: 1 })
    const expected = { width, height, data: Uint8Array.from(src.data, (v) => (v >= 128 ? 255 : 0)) }
    expect(decodeImage(bytes).channels).toBe(1)
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

describe('decodeImage: the committed OCR fixtures', () => {
  const folder = new URL('../../fixtures/ocr/', import.meta.url)
  const manifest = JSON.parse(readFileSync(new URL('manifest.json', folder), 'utf8')) as OcrManifest

  it.each(manifest.images.map((entry) => [entry.file, entry] as const))('%s decodes to the pixels it was rendered from', (file, entry) => {
    const rendered = renderTextLine(entry.text, manifest.render)
    const expected = entry.angle === 180 ? rotate180(rendered) : rendered
    const decoded = decodeImage(new Uint8Array(readFileSync(new URL(file, folder))))
    if (file.endsWith('.png')) {
      expect(decoded.channels).toBe(1)
      expect(maxError(decoded, expected)).toBe(0)
    } else {
      expect([decoded.width, decoded.height]).toEqual([expected.width, expected.height])
      expect(meanError(decoded, expected)).toBeLessThan(3)
    }
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

  it('refuses truncated PNGs, wherever they are cut, and says where', () => {
    const cuts: [length: number, where: string][] = [
      [8, 'inside its IHDR chunk'],
      [20, 'inside its IHDR chunk'],
      [36, 'inside a chunk header'],
      [grayPng.length >> 1, 'inside its IDAT chunk'],
      [grayPng.length - 12, 'before its IEND chunk'],
      [grayPng.length - 1, 'inside its IEND chunk'],
    ]
    for (const [length, where] of cuts) {
      const error = decodeError(grayPng.slice(0, length))
      expect([length, error.reason, error.message]).toEqual([length, 'corrupt', `invalid PNG: the file is cut short: it ends ${where}`])
    }
  })

  it('still says a header is missing when the bytes after the signature are not IHDR', () => {
    const bytes = grayPng.slice(0, 20)
    bytes[12] = 0x58 // 'X' for the I of IHDR
    expect(decodeError(bytes).message).toBe('invalid PNG: missing IHDR header')
  })

  it('refuses a palette PNG without its palette, which a decoder would fill with colours of its own', () => {
    const bytes = craftPng(2, 2, new Uint8Array([0, 0, 1, 0, 2, 3]), { colorType: 3 })
    expect([decodeError(bytes).reason, decodeError(bytes).message]).toEqual(['corrupt', 'invalid PNG: a palette image (colour type 3) without its PLTE chunk'])
  })

  it('refuses a PNG whose image data was altered (CRC mismatch)', () => {
    const bytes = grayPng.slice()
    bytes[bytes.length - 20]! ^= 0xff // inside the last IDAT chunk
    expect(decodeError(bytes).message).toMatch(/^invalid PNG: /)
  })

  it('refuses a PNG whose data stream is shorter than its header promises, and says so', () => {
    const bytes = craftPng(100, 100, new Uint8Array(50 * 101)) // 50 of the 100 rows
    expect([decodeError(bytes).reason, decodeError(bytes).message]).toEqual([
      'corrupt',
      'invalid PNG: its image data ends before its last row: 5050 bytes where 100x100 pixels need 10100',
    ])
    // A zlib stream cut short, in chunks whose CRCs are right.
    const ihdr = craftPng(10, 10, new Uint8Array(0)).subarray(0, 33)
    const cut = zlibSync(seededBytes(110, 7)).subarray(0, 40)
    const parts = [ihdr, pngChunk('IDAT', cut), pngChunk('IEND', new Uint8Array(0))]
    const error = decodeError(Uint8Array.from(parts.flatMap((p) => Array.from(p))))
    expect([error.reason, error.message]).toEqual(['corrupt', 'invalid PNG: unexpected EOF'])
    // Data that is not zlib at all: fast-png's message leads up to its cause's, and the answer has both.
    expect(decodeError(craftRawPng(10, 10, seededBytes(50, 3))).message).toBe('invalid PNG: Error while decompressing the data: invalid zlib data')
  })

  it("counts an interlaced image's seven passes when it says how much image data is missing", () => {
    // 10x10 gray, Adam7: passes of 2x2, 1x2, 3x1, 2x3, 5x2, 5x5 and 10x5 pixels, with a filter byte a row, take
    // 6 + 4 + 4 + 9 + 12 + 30 + 55 = 120 bytes; the plain layout would take 110.
    const bytes = craftPng(10, 10, new Uint8Array(100), { interlaced: true })
    expect(decodeError(bytes).message).toBe('invalid PNG: its image data ends before its last row: 100 bytes where 10x10 pixels need 120')
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

  it('refuses image data that inflates to far more than its dimensions need', () => {
    const bytes = craftPng(1000, 1000, new Uint8Array(8 * 1024 * 1024)) // 8 MiB for an image of 1 MB
    const error = decodeError(bytes)
    expect([error.reason, error.message]).toEqual(['corrupt', 'invalid PNG: image data is larger than its dimensions allow'])
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

  it('refuses truncated JPEGs, and says they were cut short', () => {
    const bytes = new Uint8Array(jpeg.encode({ width, height, data: rgba(() => 255) }, 90).data)
    for (const length of [3, 20]) {
      const error = decodeError(bytes.slice(0, length))
      expect([error.reason, error.message]).toEqual(['corrupt', 'invalid JPEG: no frame header (the file is cut short, or not a JPEG)'])
    }
    for (const length of [bytes.length >> 1, bytes.length - 2]) {
      const error = decodeError(bytes.slice(0, length))
      expect([error.reason, error.message]).toEqual(['corrupt', 'invalid JPEG: the file is cut short: it ends before its end-of-image marker'])
    }
  })
})
