/**
 * Quick throughput sanity check for the OCR direction classifier.
 *
 *   npx tsx scripts/models/ocr/bench-cls.ts [--model <cls.onnx>] [--seconds 3] [--threads 1]
 *
 * Measures decode + preprocess of a fixture PNG (per item), then raw
 * session.run items/s (the input tensor is built once) at batch sizes 1, 8
 * and 32. `--threads` defaults to 1, as the other scripts here pin it; the
 * bench (bench/model-limit.ts) measures 1 thread and all cores.
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { decodeImage } from '../../../examples/ocr-direction/image.js'
import { clsPreprocess, clsPreprocessBatch } from '../../../examples/ocr-direction/preprocess.js'
import { createSession, ort } from '../lib/ort-session.js'
import { defaultClsModelPath } from './cls-model-path.js'
import { renderTextLine } from './render-text.js'

const { values } = parseArgs({
  options: { model: { type: 'string' }, seconds: { type: 'string', default: '3' }, threads: { type: 'string', default: '1' } },
})
const budgetMs = Number(values.seconds) * 1000
ort.env.wasm.numThreads = Number(values.threads) // read when the first session starts
const session = await createSession(values.model ?? defaultClsModelPath())
const inputName = session.inputNames[0] ?? 'x'

/** Calls of `fn` per second over the budget, after a short warm-up. */
async function rate(fn: () => unknown): Promise<number> {
  for (let i = 0; i < 3; i++) await fn() // warm-up: first runs allocate
  let calls = 0
  const t0 = performance.now()
  while (performance.now() - t0 < budgetMs) {
    await fn()
    calls++
  }
  return (calls * 1000) / (performance.now() - t0)
}

const png = new Uint8Array(readFileSync(new URL('../../../test/fixtures/ocr/hello-world.png', import.meta.url)))
const prepared = await rate(() => clsPreprocess(decodeImage(png)))
console.log(`decode + preprocess of hello-world.png: ${(1e6 / prepared).toFixed(0)} us/item`)

const line = renderTextLine('The quick brown fox 12345', { scale: 3, bold: 1, margin: 6 })
for (const batch of [1, 8, 32]) {
  const { data, dims } = clsPreprocessBatch(Array.from({ length: batch }, () => line))
  const feeds = { [inputName]: new ort.Tensor('float32', data, dims) }
  const runs = await rate(() => session.run(feeds))
  console.log(
    `numThreads ${ort.env.wasm.numThreads}, batch ${String(batch).padStart(2)}: ${(runs * batch).toFixed(1).padStart(7)} items/s  (${(1000 / runs).toFixed(2)} ms/run)`,
  )
}
