/**
 * The OCR recognizer and detector, as shipped (`adaptive`) against each
 * fixed `maxBatchSize` up to their bound (8 lines, 4 pages): items/s and p99
 * with 64 callers at once, in process (bench/stage-load.ts); each setting is
 * an instance of the stage's deployment, and the settings take turns round
 * by round, as the served rows do.
 *
 *   npx tsx --conditions=edgeserve-source bench/adaptive-stages.ts [--duration S] [--rounds N] [--models recognizer,detector] [--shipped-only]
 *
 * `--shipped-only` measures the shipped setting alone (bench/native.ts runs it so, once per runtime).
 *
 * Prints one JSON line: a row per model and setting (shaped as the served
 * batch-size rows of bench/run.ts) and the `adaptive_vs_best_fixed_*`
 * ratios. Run alone, it also merges its section into
 * bench/results/latest.json and regenerates docs/benchmarks.md;
 * `npm run bench` passes `--print-only`.
 */
import { textDetector } from '../examples/ocr/detector.js'
import { textRecognizer } from '../examples/ocr/recognizer.js'
import { argValue } from './lib.js'
import { adaptiveVsBestFixed } from './adaptive-ratio.js'
import { mergeIntoResults } from './merge-results.js'
import { instanceOf, measure, recordInputs, type Setting } from './stage-load.js'

// Six rounds of 5 s, as the served adaptive rows (bench/run.ts's ADAPTIVE_ROUNDS says why).
const durationS = Number(argValue('--duration') ?? 5)
const rounds = Number(argValue('--rounds') ?? 6)

const { pages, lines } = await recordInputs()
process.stderr.write(`adaptive stages: ${pages.length} pages, ${lines.length} lines, ${durationS} s a row, ${rounds} rounds\n`)

const shippedOnly = process.argv.includes('--shipped-only')
const recognizerSettings: Setting[] = [
  ...(shippedOnly ? [] : [1, 2, 4, 8]).map((n) => ({
    setting: String(n),
    call: instanceOf(textRecognizer.bind({ maxBatchSize: n, adaptive: false })).recognize,
  })),
  { setting: 'adaptive', call: instanceOf(textRecognizer).recognize },
]
const detectorSettings: Setting[] = [
  ...(shippedOnly ? [] : [1, 2, 4]).map((n) => ({ setting: String(n), call: instanceOf(textDetector.bind({ maxBatchSize: n, adaptive: false })).detect })),
  { setting: 'adaptive', call: instanceOf(textDetector).detect },
]
const models = (argValue('--models') ?? 'recognizer,detector').split(',')
const rows = [
  ...(models.includes('recognizer') ? await measure('ocr-recognizer', recognizerSettings, lines, { durationS, rounds }) : []),
  ...(models.includes('detector') ? await measure('ocr-detector', detectorSettings, pages, { durationS, rounds }) : []),
]
// The shipped setting alone has no fixed size to be compared with.
const ratios = shippedOnly ? {} : adaptiveVsBestFixed(rows)
const ratioNotes = Object.fromEntries(
  Object.keys(ratios).map((key) => [
    key,
    `items/s with 64 callers in process (bench/adaptive-stages.ts) of the example as shipped (adaptive) over its best fixed maxBatchSize, ` +
      `rows round-robin (${durationS} s of calls each, the calls still out then waited for and counted), ${rounds} rounds: each round against the size best by median in the other rounds, the median of those ratios`,
  ]),
)
const section = { rows, ratios, ratioNotes, durationS, rounds }
if (!process.argv.includes('--print-only')) mergeIntoResults('adaptiveStages', section, { ratios, ratioNotes })
console.log(JSON.stringify(section))
