/**
 * Quick throughput sanity check for the OCR direction classifier.
 *
 *   npx tsx scripts/models/ocr/bench-cls.ts [--model <cls.onnx>] [--seconds 3]
 *
 * Measures raw session.run items/s (preprocessing excluded: the input tensor
 * is built once) at batch sizes 1, 8 and 32 with numThreads = 1.
 */
import { parseArgs } from 'node:util'
import { clsPreprocessBatch } from '../../../examples/ocr-direction/preprocess.js'
import { createSession, ort } from '../lib/ort-session.js'
import { defaultClsModelPath } from './cls-model-path.js'
import { renderTextLine } from './render-text.js'

const { values } = parseArgs({
  options: { model: { type: 'string' }, seconds: { type: 'string', default: '3' } },
})
const budgetMs = Number(values.seconds) * 1000
const session = await createSession(values.model ?? defaultClsModelPath())
const inputName = session.inputNames[0] ?? 'x'
const line = renderTextLine('The quick brown fox 12345', { scale: 3, bold: 1, margin: 6 })

for (const batch of [1, 8, 32]) {
  const { data, dims } = clsPreprocessBatch(Array.from({ length: batch }, () => line))
  const feeds = { [inputName]: new ort.Tensor('float32', data, dims) }
  for (let i = 0; i < 3; i++) await session.run(feeds) // warm-up: first runs allocate
  let runs = 0
  const t0 = performance.now()
  while (performance.now() - t0 < budgetMs) {
    await session.run(feeds)
    runs++
  }
  const secs = (performance.now() - t0) / 1000
  console.log(
    `batch ${String(batch).padStart(2)}: ${((runs * batch) / secs).toFixed(1).padStart(7)} items/s  ` +
      `(${((secs * 1000) / runs).toFixed(2)} ms/run, ${runs} runs)`,
  )
}
