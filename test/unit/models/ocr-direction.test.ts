import { readFileSync } from 'node:fs'
import * as ort from 'onnxruntime-web'
import { beforeAll, describe, expect, it } from 'vitest'
import { decodeImage, type DecodedImage, type RgbImage } from '../../../examples/ocr-direction/image.js'
import { PADDLE_CLS_THRESH, clsPostprocess, clsPostprocessBatch, shouldRotate } from '../../../examples/ocr-direction/postprocess.js'
import {
  CLS_HEIGHT,
  CLS_INPUT_SIZE,
  CLS_WIDTH,
  clsNormalize,
  clsNormalizeBatch,
  clsPreprocess,
  clsPreprocessBatch,
  clsResize,
  clsResizedWidth,
} from '../../../examples/ocr-direction/preprocess.js'
import { defaultClsModelPath } from '../../../scripts/models/ocr/cls-model-path.js'
import { buildOcrFixtures, type OcrManifest } from '../../../scripts/models/ocr/fixtures.js'
import { seededBytes } from '../../support/prng.js'

ort.env.wasm.numThreads = 1

const fixturesUrl = new URL('../../fixtures/ocr/', import.meta.url)
const readFixture = (file: string): Uint8Array => new Uint8Array(readFileSync(new URL(file, fixturesUrl)))
const manifest = JSON.parse(new TextDecoder().decode(readFixture('manifest.json'))) as OcrManifest
let session: ort.InferenceSession

beforeAll(async () => {
  session = await ort.InferenceSession.create(defaultClsModelPath(), { executionProviders: ['wasm'] })
})

async function classify(images: DecodedImage[]) {
  const { data, dims } = clsPreprocessBatch(images)
  const result = await session.run({ [session.inputNames[0]!]: new ort.Tensor('float32', data, dims) })
  return clsPostprocessBatch(result[session.outputNames[0]!]!.data as Float32Array, images.length)
}

const solid = (width: number, height: number, rgb: [number, number, number]): RgbImage => ({
  width,
  height,
  data: Uint8Array.from({ length: width * height * 3 }, (_, i) => rgb[i % 3]!),
})

describe('OCR direction: decode -> preprocess -> classify -> postprocess', () => {
  it('covers upright and rotated PNGs of 3 strings and a JPEG pair', () => {
    const files = manifest.images.map((m) => m.file)
    expect(files.filter((f) => f.endsWith('.png'))).toHaveLength(6)
    expect(files.filter((f) => f.endsWith('.jpg'))).toHaveLength(2)
    expect(manifest.images.filter((m) => m.angle === 180)).toHaveLength(4)
  })

  it('gives 0 for every upright fixture and 180 for every rotated one, in one batch', async () => {
    const images = manifest.images.map((m) => decodeImage(readFixture(m.file)))
    const results = await classify(images)
    expect(results.map((r) => r.angle)).toEqual(manifest.images.map((m) => m.angle))
    for (const r of results) expect(r.confidence).toBeGreaterThan(PADDLE_CLS_THRESH)
    expect(results.map((r) => shouldRotate(r))).toEqual(manifest.images.map((m) => m.angle === 180))
  })

  it('gives an image the same result alone as in a batch', async () => {
    const images = manifest.images.slice(0, 3).map((m) => decodeImage(readFixture(m.file)))
    const batched = await classify(images)
    for (const [i, img] of images.entries()) {
      const [alone] = await classify([img])
      expect(alone?.angle).toBe(batched[i]?.angle)
      expect(alone?.confidence).toBeCloseTo(batched[i]!.confidence, 5)
    }
  })

  it('has committed fixtures identical to what scripts/models/ocr builds', () => {
    const { files } = buildOcrFixtures()
    for (const [file, bytes] of files) expect(Buffer.from(readFixture(file)).equals(Buffer.from(bytes)), file).toBe(true)
  })
})

/**
 * PaddleOCR's resize_norm_img written out plainly, as the reference the
 * one-pass clsPreprocess must match: cv2.resize with INTER_LINEAR (half-pixel
 * centres, edges clamped, rounded to uint8) into an RGB image, then each
 * value normalized into BGR planes, right-padded with 0.
 */
function referencePreprocess(img: RgbImage): Float32Array {
  const w = clsResizedWidth(img.width, img.height)
  const at = (x: number, y: number, c: number) => img.data[(y * img.width + x) * 3 + c]!
  const source = (d: number, scale: number, size: number): [number, number] => {
    const f = (d + 0.5) * scale - 0.5
    const i = Math.floor(f)
    if (i < 0) return [0, 0]
    if (i >= size - 1) return [size - 1, 0]
    return [i, f - i]
  }
  const resized: number[][][] = [] // [y][x][c], uint8 values
  for (let y = 0; y < CLS_HEIGHT; y++) {
    const [y0, fy] = source(y, img.height / CLS_HEIGHT, img.height)
    const y1 = Math.min(y0 + 1, img.height - 1)
    resized.push(
      Array.from({ length: w }, (_, x) => {
        const [x0, fx] = source(x, img.width / w, img.width)
        const x1 = Math.min(x0 + 1, img.width - 1)
        return [0, 1, 2].map((c) => {
          const top = at(x0, y0, c) + (at(x1, y0, c) - at(x0, y0, c)) * fx
          const bottom = at(x0, y1, c) + (at(x1, y1, c) - at(x0, y1, c)) * fx
          return Math.round(top + (bottom - top) * fy)
        })
      }),
    )
  }
  const out = new Float32Array(CLS_INPUT_SIZE)
  for (let c = 0; c < 3; c++) {
    for (let y = 0; y < CLS_HEIGHT; y++) {
      for (let x = 0; x < w; x++) out[c * CLS_HEIGHT * CLS_WIDTH + y * CLS_WIDTH + x] = (resized[y]![x]![2 - c]! / 255 - 0.5) / 0.5
    }
  }
  return out
}

const maxDiff = (a: Float32Array, b: Float32Array): number => a.reduce((max, v, i) => Math.max(max, Math.abs(v - b[i]!)), 0)

describe('clsPreprocess', () => {
  it('equals a plain per-pixel reference: fixtures, and random images shrunk, stretched and squashed', () => {
    const images: RgbImage[] = manifest.images.map((m) => {
      const img = decodeImage(readFixture(m.file))
      if (img.channels !== 1) return img
      return { ...img, channels: undefined, data: Uint8Array.from({ length: img.data.length * 3 }, (_, i) => img.data[Math.floor(i / 3)]!) }
    })
    const sizes = [
      [1, 1],
      [1, 200],
      [300, 2],
      [50, 40],
      [192, 48],
      [1000, 48],
      [7, 3],
      [97, 61],
      [4000, 20],
      [13, 500],
      [244, 40],
      [4096, 1000],
    ] as const
    for (const [k, [width, height]] of sizes.entries()) images.push({ width, height, data: seededBytes(width * height * 3, k + 1) })
    for (const img of images) {
      expect(maxDiff(clsPreprocess(img), referencePreprocess(img)), `${img.width}x${img.height}`).toBeLessThan(1e-6)
    }
  })

  it('gives a gray image the same input as its RGB twin', () => {
    for (const [k, [width, height]] of (
      [
        [244, 40],
        [30, 90],
        [500, 17],
      ] as const
    ).entries()) {
      const gray = seededBytes(width * height, 50 + k)
      const rgb = Uint8Array.from({ length: gray.length * 3 }, (_, i) => gray[Math.floor(i / 3)]!)
      expect(maxDiff(clsPreprocess({ width, height, channels: 1, data: gray }), clsPreprocess({ width, height, data: rgb }))).toBe(0)
    }
  })

  it('maps each of the 256 levels to (v / 255 - 0.5) / 0.5 as float32', () => {
    // 192x48 is the output size: every weight is 0, so each output value is one source level.
    const levels = Uint8Array.from({ length: CLS_WIDTH * CLS_HEIGHT }, (_, i) => (i * 7) % 256)
    const out = clsPreprocess({ width: CLS_WIDTH, height: CLS_HEIGHT, channels: 1, data: levels })
    const expected = Float32Array.from(levels, (v) => (v / 255 - 0.5) / 0.5)
    for (let c = 0; c < 3; c++) expect(maxDiff(out.subarray(c * expected.length, (c + 1) * expected.length), expected)).toBe(0)
  })

  it('writes the padding too, so the output buffer need not be zeroed', () => {
    const image = solid(24, 12, [200, 100, 50]) // resized to 96 of the 192 columns
    const out = clsPreprocess(image, new Float32Array(CLS_INPUT_SIZE + 10).fill(Number.NaN), 10)
    expect(maxDiff(out.subarray(10), clsPreprocess(image))).toBe(0)
    expect(out.subarray(0, 10).every(Number.isNaN)).toBe(true)
  })

  it('refuses pixel data shorter than its dimensions', () => {
    expect(() => clsPreprocess({ width: 10, height: 10, data: new Uint8Array(299) })).toThrow(
      'image data too short: a 10x10 image with 3 channel(s) needs 300 bytes, got 299',
    )
    expect(() => clsPreprocess({ width: 10, height: 10, channels: 1, data: new Uint8Array(99) })).toThrow(RangeError)
    expect(() => clsResize({ width: 10, height: 10, channels: 1, data: new Uint8Array(99) })).toThrow(
      'image data too short: a 10x10 image with 1 channel(s) needs 100 bytes, got 99',
    )
  })

  it('resizes to height 48 keeping the aspect ratio, capped at width 192', () => {
    expect(clsResizedWidth(460, 40)).toBe(192)
    expect(clsResizedWidth(100, 48)).toBe(100)
    expect(clsResizedWidth(50, 40)).toBe(60) // ceil(48 * 1.25)
    expect(clsResizedWidth(1, 4000)).toBe(1)
  })

  it('normalizes to [-1, 1] in BGR channel order and pads the right with 0', () => {
    const out = clsPreprocess(solid(24, 12, [255, 0, 0])) // pure red, resized to 96x48
    expect(out).toHaveLength(CLS_INPUT_SIZE)
    const plane = CLS_HEIGHT * CLS_WIDTH
    const at = (c: number, y: number, x: number): number => out[c * plane + y * CLS_WIDTH + x]!
    for (const [y, x] of [
      [0, 0],
      [47, 95],
      [20, 50],
    ] as const) {
      expect([at(0, y, x), at(1, y, x), at(2, y, x)]).toEqual([-1, -1, 1]) // B, G, R
    }
    for (let c = 0; c < 3; c++) expect(at(c, 10, 96)).toBe(0)
    expect(at(2, 47, 191)).toBe(0)
  })

  it('writes each image of a batch into its own slice', () => {
    const { data, dims } = clsPreprocessBatch([solid(10, 10, [255, 255, 255]), solid(10, 10, [0, 0, 0])])
    expect(dims).toEqual([2, 3, CLS_HEIGHT, CLS_WIDTH])
    expect(data[0]).toBe(1)
    expect(data[CLS_INPUT_SIZE]).toBe(-1)
  })
})

describe('clsResize and clsNormalize: the two steps a served request and its batch take', () => {
  const gray = (width: number, height: number, seed: number): DecodedImage => ({ width, height, channels: 1, data: seededBytes(width * height, seed) })
  const rgb = (width: number, height: number, seed: number): DecodedImage => ({ width, height, data: seededBytes(width * height * 3, seed) })
  const images = [gray(244, 40, 1), rgb(244, 40, 2), gray(7, 3, 3), rgb(13, 500, 4), gray(1000, 48, 5), rgb(4096, 120, 6), gray(191, 48, 7)]

  it('together equal clsPreprocess, for gray and RGB, short, tall and wide images', () => {
    for (const img of images) expect(maxDiff(clsNormalize(clsResize(img)), clsPreprocess(img)), `${img.width}x${img.height}`).toBe(0)
  })

  it('keep a line of 48 rows of 8-bit pixels, gray staying gray', () => {
    const line = clsResize(gray(244, 40, 8))
    expect([line.width, line.channels, line.data.length]).toEqual([192, 1, 48 * 192])
    const solidLine = clsResize(solid(30, 10, [200, 100, 50])) // 144 columns
    expect([solidLine.width, solidLine.channels, solidLine.data.length]).toEqual([144, 3, 48 * 144 * 3])
    expect(solidLine.data.every((v, i) => v === [200, 100, 50][i % 3])).toBe(true)
  })

  it('give each line of a batch its own slice', () => {
    const lines = images.map(clsResize)
    const { data, dims } = clsNormalizeBatch(lines)
    expect(dims).toEqual([lines.length, 3, CLS_HEIGHT, CLS_WIDTH])
    lines.forEach((line, n) => expect(maxDiff(data.subarray(n * CLS_INPUT_SIZE, (n + 1) * CLS_INPUT_SIZE), clsNormalize(line))).toBe(0))
  })

  it('refuse a line that clsResize could not have made', () => {
    const line = clsResize(gray(244, 40, 9))
    const message = /clsNormalize: expected a line of 48 rows of 1 to 192 pixels of 1 or 3 bytes/
    expect(() => clsNormalize({ ...line, data: line.data.subarray(1) })).toThrow(message)
    expect(() => clsNormalize({ ...line, width: 193 })).toThrow(message)
    expect(() => clsNormalize({ ...line, channels: 2 as 1 })).toThrow(message)
    expect(() => clsNormalize(line, new Float32Array(CLS_INPUT_SIZE), 1)).toThrow(RangeError)
  })
})

describe('clsPostprocess', () => {
  it('reads the probabilities as they are (the model ends in Softmax)', () => {
    const probs = Float32Array.of(0.25, 0.75, 0.9, 0.1)
    expect(clsPostprocess(probs, 0)).toEqual({ angle: 180, confidence: 0.75 })
    expect(clsPostprocess(probs, 1).angle).toBe(0)
    expect(clsPostprocess(probs, 1).confidence).toBeCloseTo(0.9, 6)
  })

  it('resolves a tie to 0 and checks the batch size', () => {
    expect(clsPostprocess([0.5, 0.5]).angle).toBe(0)
    expect(() => clsPostprocessBatch([0.5, 0.5, 0.1], 2)).toThrow(/expected 2x2 scores/)
    expect(() => clsPostprocess([0.5, 0.5], 1)).toThrow(RangeError)
  })

  it('rotates only above the threshold', () => {
    expect(shouldRotate({ angle: 180, confidence: 0.95 })).toBe(true)
    expect(shouldRotate({ angle: 180, confidence: 0.85 })).toBe(false)
    expect(shouldRotate({ angle: 0, confidence: 0.99 })).toBe(false)
  })
})
