/**
 * The OCR pipeline served on Node (`POST /ocr`, real HTTP on loopback):
 * pages/s and p50/p99 latency at concurrency 1, 8 and 32, with the
 * recognizer unbatched (one `session.run` per line), batched (8 lines per
 * run, keyed by width bucket) and as shipped (its size measured, up to 8), each
 * stage's share of the model time (from the batches' execution seconds in
 * /-/metrics), and the pipeline's limit in process: the same pipeline code
 * with each stage's instance called directly (no HTTP, no handles, no
 * router), best pages/s over concurrency 1, 2 and 4.
 *
 *   npx tsx --conditions=edgeserve-source bench/ocr-pipeline.ts [--quick] [--pages N] [--concurrency 1,8,32]
 *
 * Prints a markdown table, then one JSON line with every row. Run alone, it
 * also merges its section into bench/results/latest.json and regenerates
 * docs/benchmarks.md from it; `npm run bench` passes `--print-only` and
 * writes the whole file itself. Pages are the accuracy fixtures
 * (test/fixtures/ocr-pages), sent round-robin.
 */
import { readFileSync } from 'node:fs'
import { Hono } from 'hono'
import { ingress, type Deployment } from '../src/index.js'
import { serve } from '../src/runtime/node/index.js'
import { ocrDirection } from '../examples/ocr-direction/classifier.js'
import { textRecognizer } from '../examples/ocr/recognizer.js'
import { ocrPipeline } from '../examples/ocr/pipeline.js'
import { textDetector } from '../examples/ocr/detector.js'
import { argValue, percentile, quick } from './lib.js'
import { inProcessPipelineLimit, type PipelineLimit } from './ocr-pipeline-limit.js'
import { mergeIntoResults } from './merge-results.js'

const dir = new URL('../test/fixtures/ocr-pages/', import.meta.url)
const manifest = JSON.parse(readFileSync(new URL('manifest.json', dir), 'utf8')) as { pages: { file: string }[] }
const pages = manifest.pages.map(({ file }) => ({
  body: new Uint8Array(readFileSync(new URL(file, dir))),
  type: file.endsWith('.jpg') ? 'image/jpeg' : 'image/png',
}))
const pagesPerRow = Number(argValue('--pages') ?? (quick ? 8 : 48))
const levels = (argValue('--concurrency') ?? '1,8,32').split(',').map(Number)

const STAGES = { TextDetector: 'detect', TextDirectionClassifier: 'classify', TextRecognizer: 'recognize' } as const

/** Seconds spent in each stage's batches so far. */
async function stageSeconds(url: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${url}/-/metrics`)).text()
  const seconds: Record<string, number> = {}
  for (const line of text.split('\n')) {
    if (!line.startsWith('edgeserve_batch_execution_seconds_sum{')) continue
    const name = /deployment="([^"]+)"/.exec(line)?.[1]
    const stage = name && STAGES[name as keyof typeof STAGES]
    if (stage) seconds[stage] = (seconds[stage] ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1))
  }
  return seconds
}

interface Row {
  recognizer: string
  concurrency: number
  pagesPerS: number
  p50Ms: number
  p99Ms: number
  /** Share of the model time per stage. */
  split: Record<string, number>
  /** pagesPerS over the in-process limit's. */
  vsLimit: number
}

async function measure(label: string, pipeline: Deployment, limit: PipelineLimit): Promise<Row[]> {
  const app = new Hono().post('/ocr', ingress(pipeline))
  const server = await serve(app, { port: 0, name: `ocr-bench-${label}`, handleSignals: false, dashboard: false })
  const post = async (i: number): Promise<number> => {
    const page = pages[i % pages.length]!
    const t0 = performance.now()
    const response = await fetch(`${server.url}/ocr`, { method: 'POST', body: page.body, headers: { 'content-type': page.type } })
    await response.arrayBuffer()
    if (response.status !== 200) throw new Error(`POST /ocr answered ${response.status}`)
    return performance.now() - t0
  }
  try {
    // Warm-up: load the models and let V8 tier the WebAssembly up.
    for (let i = 0; i < pages.length; i++) await post(i)
    const rows: Row[] = []
    for (const concurrency of levels) {
      const before = await stageSeconds(server.url)
      const latencies: number[] = []
      let next = 0
      const t0 = performance.now()
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < pagesPerRow) latencies.push(await post(next++))
        }),
      )
      const wall = (performance.now() - t0) / 1000
      const after = await stageSeconds(server.url)
      const spent = Object.fromEntries(Object.values(STAGES).map((s) => [s, (after[s] ?? 0) - (before[s] ?? 0)]))
      const total = Object.values(spent).reduce((a, b) => a + b, 0)
      rows.push({
        recognizer: label,
        concurrency,
        pagesPerS: latencies.length / wall,
        p50Ms: percentile(latencies, 50),
        p99Ms: percentile(latencies, 99),
        split: Object.fromEntries(Object.entries(spent).map(([s, v]) => [s, total > 0 ? v / total : 0])),
        vsLimit: latencies.length / wall / limit.pagesPerS,
      })
    }
    return rows
  } finally {
    await server.close()
  }
}

const limit = await inProcessPipelineLimit(pages, pagesPerRow)
const rows = [
  // Unbatched runs each line alone; batched groups lines by width bucket, 8 per run; the shipped recognizer measures its size (up to 8).
  ...(await measure('unbatched', ocrPipeline.bind(textDetector, ocrDirection, textRecognizer.bind({ maxBatchSize: 1 })), limit)),
  ...(await measure('batched', ocrPipeline.bind(textDetector, ocrDirection, textRecognizer.bind({ maxBatchSize: 8, adaptive: false })), limit)),
  ...(await measure('adaptive', ocrPipeline, limit)),
]
const pct = (x: number | undefined): string => `${Math.round((x ?? 0) * 100)}%`
console.log(`In-process limit: ${limit.pagesPerS.toFixed(2)} pages/s (concurrency ${limit.concurrency})`)
console.log('| recognizer | c | pages/s | p50 ms | p99 ms | over limit | detect | classify | recognize |')
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
for (const r of rows) {
  console.log(
    `| ${r.recognizer} | ${r.concurrency} | ${r.pagesPerS.toFixed(2)} | ${r.p50Ms.toFixed(0)} | ${r.p99Ms.toFixed(0)} | ${r.vsLimit.toFixed(2)} | ${pct(r.split.detect)} | ${pct(r.split.classify)} | ${pct(r.split.recognize)} |`,
  )
}
const section = { date: new Date().toISOString(), mode: quick ? 'quick' : 'full', pagesPerRow, limit, rows }
if (!process.argv.includes('--print-only')) mergeIntoResults('ocrPipeline', section)
console.log(JSON.stringify(section))
