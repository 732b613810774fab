/**
 * How should the recognizer batch a page's lines? Times four strategies on
 * the text lines of the accuracy pages (rendered, 48 px high), each the
 * median of several interleaved rounds, in one process:
 *
 *   alone-exact    one session.run per line at its own width (no padding)
 *   alone-bucket   one run per line, padded to its width bucket
 *   buckets        lines of one bucket share a run (up to --batch lines), padded to its widest
 *   widest         every line in one run, padded to the widest (PaddleOCR's way)
 *
 *   npx tsx scripts/models/ocr/bench-rec.ts [--rounds 5] [--batch 8] [--widths 160,320,480,640,960,1280,1920]
 *
 * Prints ms per round and lines/s for each, and whether each strategy read
 * the same text as alone-exact.
 */
import { parseArgs } from 'node:util'
import { loadModel } from '../../../src/onnx/node.js'
import { characterList, recognizerBytes } from '../../../examples/ocr/model/bytes.js'
import { ctcClasses, ctcGreedyDecode } from '../../../examples/ocr/ctc.js'
import { REC_HEIGHT, REC_WIDTHS, normalizeForRecognition, recBucket, resizeForRecognition } from '../../../examples/ocr/recognize-input.js'
import type { RgbImage } from '../../../examples/ocr-direction/image.js'
import { buildPageFixtures } from './pages.js'
import { renderTextLine } from './render-text.js'

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '5' }, batch: { type: 'string', default: '8' }, widths: { type: 'string' } },
})
const rounds = Number(values.rounds)
const maxBatch = Number(values.batch)
const widths = values.widths ? values.widths.split(',').map(Number) : [...REC_WIDTHS]

const model = await loadModel(await recognizerBytes())
const classes = ctcClasses(await characterList())
const texts = buildPageFixtures()
  .pages.filter((p) => !p.file.includes('.rot180') && !p.file.includes('noisy'))
  .flatMap((p) => p.text.split('\n'))
const lines = texts.map((text) => resizeForRecognition(renderTextLine(text, { scale: 3, margin: 6 }), widths))

async function run(group: RgbImage[], width: number): Promise<string[]> {
  const size = 3 * REC_HEIGHT * width
  const data = new Float32Array(group.length * size)
  group.forEach((line, i) => normalizeForRecognition(line, width, data, i * size))
  const out = (await model.run({ [model.inputNames[0]!]: new model.Tensor('float32', data, [group.length, 3, REC_HEIGHT, width]) }))[model.outputNames[0]!]!
  return group.map((_, i) => ctcGreedyDecode(out.data as Float32Array, i, out.dims[1]!, classes).text)
}

const strategies: Record<string, () => Promise<string[]>> = {
  'alone-exact': async () => {
    const texts: string[] = []
    for (const line of lines) texts.push(...(await run([line], Math.max(8, Math.ceil(line.width / 8) * 8))))
    return texts
  },
  'alone-bucket': async () => {
    const texts: string[] = []
    for (const line of lines) texts.push(...(await run([line], recBucket(line.width, widths))))
    return texts
  },
  buckets: async () => {
    const texts = new Array<string>(lines.length)
    const byBucket = new Map<number, number[]>()
    lines.forEach((line, i) => {
      const bucket = recBucket(line.width, widths)
      byBucket.set(bucket, [...(byBucket.get(bucket) ?? []), i])
    })
    for (const [width, indices] of byBucket) {
      for (let start = 0; start < indices.length; start += maxBatch) {
        const chunk = indices.slice(start, start + maxBatch)
        const group = chunk.map((i) => lines[i]!)
        // As the recognizer does: the bucket groups, the run is padded to its widest line.
        const read = await run(group, Math.min(width, Math.ceil(Math.max(...group.map((l) => l.width)) / 8) * 8))
        chunk.forEach((i, k) => (texts[i] = read[k]!))
      }
    }
    return texts
  },
  widest: async () => run(lines, recBucket(Math.max(...lines.map((l) => l.width)), widths)),
}

const times: Record<string, number[]> = {}
const reads: Record<string, string[]> = {}
for (const [name, strategy] of Object.entries(strategies)) reads[name] = await strategy() // warm-up, and the texts
for (let r = 0; r < rounds; r++) {
  for (const [name, strategy] of Object.entries(strategies)) {
    const t0 = performance.now()
    await strategy()
    ;(times[name] ??= []).push(performance.now() - t0)
  }
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
console.log(`${lines.length} lines, widths ${lines.map((l) => l.width).join(' ')}; buckets ${widths.join(',')}; batch ${maxBatch}`)
const base = median(times['alone-exact']!)
for (const name of Object.keys(strategies)) {
  const ms = median(times[name]!)
  const same = reads[name]!.every((t, i) => t === reads['alone-exact']![i])
  console.log(
    `${name.padEnd(13)} ${ms.toFixed(0).padStart(6)} ms  ${((lines.length * 1000) / ms).toFixed(1).padStart(6)} lines/s  x${(base / ms).toFixed(2)}  same text: ${same}`,
  )
}
for (const name of Object.keys(strategies)) {
  reads[name]!.forEach((text, i) => {
    if (text !== reads['alone-exact']![i]) console.log(`  ${name}: ${JSON.stringify(text)} where alone-exact read ${JSON.stringify(reads['alone-exact']![i])}`)
  })
}
