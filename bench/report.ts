/** docs/benchmarks.md and docs/images/benchmarks.svg from a results object. */
import { adaptiveVsBestFixed, type SettingRow } from './adaptive-ratio.js'
import type { Run as AutoscalingModeRun } from './autoscaling.js'
import type { LoadRow } from './http.js'
import type { IsolateAgainstNode, IsolateLimitRow } from './isolate-limit.js'
import { layoutName } from './layout.js'
import { roundByRound } from './lib.js'
import type { Best, ModelLimit } from './model-limit.js'
import type { PipelineLimit } from './ocr-pipeline-limit.js'
import type { PrepareRow } from './prepare.js'
import { WORKERD_RATIOS, type HopBreakdown, type Target } from './workerd-ratios.js'
import type { NativeRun } from './native.js'

/** A load row: autocannon's figures for one endpoint at one number of connections. */
type Row = LoadRow & { endpoint: string }

/** A section a quick run keeps from an earlier full run says so, and a piece run alone says when it ran. */
interface Section {
  carriedOver?: boolean
  date?: string
  mode?: string
}

/** bench/ocr-pipeline.ts's section. */
export interface OcrPipelineRun extends Section {
  pagesPerRow: number
  limit?: PipelineLimit
  rows: { recognizer: string; concurrency: number; pagesPerS: number; p50Ms: number; p99Ms: number; split: Record<string, number>; vsLimit?: number }[]
}

/** bench/autoscaling.ts's section: one run per mode (autoscaled, or fixed at the maximum). */
export interface AutoscalingRun extends Section {
  connections: number
  loadS: number
  idleS: number
  rampS: number
  runs: AutoscalingModeRun[]
}

/** A row of the adaptive comparison: one setting (a fixed size, or 'adaptive') of one model on one runtime. */
export type BatchSizeRow = SettingRow & Pick<Row, 'p99Ms'>

/** The served OCR row against its in-process limit (bench/run.ts's ocrServedBreakdown). */
interface OcrServed {
  requestsPerS: number
  batchItemsPerS: number | null
  runLimit: Best
  modelSpeedVsRunLimit: number | null
  modelBusy: number | null
}

/**
 * What the report reads of bench/results/latest.json, as bench/run.ts writes it. Results
 * stored by earlier runs may lack the optional sections, and a ratio not measured is null.
 */
export type BenchResults = {
  date: string
  mode: string
  elapsedS: number
  settings: {
    durationS: number
    warmupS: number
    leadInS?: number
    ratioRepeats: number
    roundS: number
    adaptiveRounds: { count: number; rowS: number }
  }
  machine: { nproc: number; cpuModel: string; memoryGiB: number; node: string; platform: string }
  engine: { workload: string; engine: string; itemsPerS: number; nsPerItem: number }[]
  requestPath: { microsecondsPerRequest: Record<string, number> }
  requestPathCount?: { files: number; functions: number; path: Record<string, string[]> }
  modelLimit: ModelLimit
  generation?: { mode: string; tokensPerS: number; ttftP50Ms: number; ttftP95Ms: number; meanLatencyMs: number; totalMs: number }[]
  node: Row[]
  nodeThreads: (Row & { replicas: number; ortThreads: string })[]
  workerd: Row[]
  workerdError?: string
  workerdDirect?: Row[]
  workerdDirectError?: string
  isolateLimits?: IsolateLimitRow[]
  ocrIsolateAgainstNode?: IsolateAgainstNode
  workerdHop?: HopBreakdown[]
  prepare?: PrepareRow[]
  prepareErrors?: Record<string, string>
  ocrPipeline?: OcrPipelineRun
  /** The pipeline on onnxruntime-node, at c=8 (results stored before have none). */
  ocrPipelineNative?: OcrPipelineRun
  /** The direction classifier served on onnxruntime-node against onnxruntime-web (bench/native.ts). */
  native?: NativeRun
  nativeError?: string
  autoscaling?: AutoscalingRun
  batchSizes?: BatchSizeRow[]
  adaptiveStages?: { rows: BatchSizeRow[] }
  /** The full run's long sections that failed, by name: the run went on without them. */
  sectionErrors?: Record<string, string>
  /** Numbers, but for a yes-or-no one (the open-loop target). */
  ratios: Record<string, number | boolean | null>
  ratioNotes: Record<string, string>
  ocrServedBreakdown?: OcrServed
}

const f = (x: number | null | undefined, digits = 0) => (x === null || x === undefined || Number.isNaN(x) ? '–' : x.toFixed(digits))
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;')

function loadTable(rows: Row[]): string {
  if (rows.length === 0) return '_not measured (see the error below)_'
  const lines = [
    '| endpoint | c | req/s | p50 ms | p99 ms | mean batch | batch items/s | server cores | load-generator cores | runs | errors + non-2xx |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ]
  for (const r of rows) {
    lines.push(
      `| ${r.endpoint} | ${r.connections} | ${f(r.requestsPerS)} | ${f(r.p50Ms, 2)} | ${f(r.p99Ms, 2)} | ${f(r.meanBatchSize, 1)} | ${f(r.batchItemsPerS)} | ` +
        `${f(r.serverCores, 2)} | ${f(r.loadGeneratorCores, 2)} | ${r.repeats ?? 1} | ${r.errors + r.non2xx} |`,
    )
  }
  return lines.join('\n')
}

/** Grouped bars: req/s at c=64 per endpoint, Node and workerd, plus the model limit line. */
function chart(results: BenchResults): string {
  const endpoints = ['hono-hello', 'noop-deployment', 'noop-batched-deployment', 'ocr-unbatched', 'ocr-batched', 'hono-json', 'mlp-batched']
  const at = (rows: Row[], e: string) => rows.find((r) => r.endpoint === e && r.connections === 64)?.requestsPerS ?? 0
  const series = [
    { name: 'Node', color: '#2b6cb0', rows: results.node },
    { name: 'workerd direct', color: '#38a169', rows: results.workerdDirect ?? [] },
    { name: 'workerd (wrangler dev)', color: '#dd6b20', rows: results.workerd },
  ]
  const W = 760
  const H = 360
  const left = 70
  const bottom = 300
  const top = 40
  const max = Math.max(1, ...endpoints.flatMap((e) => series.map((s) => at(s.rows, e))))
  const scale = (v: number) => ((bottom - top) * Math.log10(1 + v)) / Math.log10(1 + max)
  const groupW = (W - left - 20) / endpoints.length
  const barW = groupW / (series.length + 1)
  const parts: string[] = []
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, sans-serif" font-size="11">`)
  parts.push(`<rect width="${W}" height="${H}" fill="#fff"/>`)
  parts.push(`<text x="${W / 2}" y="20" text-anchor="middle" font-size="14" font-weight="600">Requests/s at 64 connections (log scale)</text>`)
  for (const tick of [1, 10, 100, 1000, 10000, 100000]) {
    if (tick > max * 1.01) break
    const y = bottom - scale(tick)
    parts.push(
      `<line x1="${left}" x2="${W - 20}" y1="${y}" y2="${y}" stroke="#e2e8f0"/><text x="${left - 6}" y="${y + 4}" text-anchor="end" fill="#4a5568">${tick}</text>`,
    )
  }
  endpoints.forEach((e, i) => {
    const x0 = left + i * groupW + barW / 2
    series.forEach((s, j) => {
      const v = at(s.rows, e)
      const h = scale(v)
      const x = x0 + j * barW
      parts.push(
        `<rect x="${x}" y="${bottom - h}" width="${barW - 2}" height="${h}" fill="${s.color}"><title>${esc(s.name)} ${esc(e)}: ${v.toFixed(0)} req/s</title></rect>`,
      )
      if (v > 0) parts.push(`<text x="${x + (barW - 2) / 2}" y="${bottom - h - 3}" text-anchor="middle" fill="#1a202c" font-size="9">${v.toFixed(0)}</text>`)
    })
    parts.push(`<text x="${x0 + barW}" y="${bottom + 14}" text-anchor="middle" fill="#1a202c" font-size="9">${esc(e.replace('-deployment', ''))}</text>`)
  })
  const limit = results.modelLimit.pipelineLimit
  if (limit) {
    const y = bottom - scale(limit.itemsPerS)
    parts.push(`<line x1="${left}" x2="${W - 20}" y1="${y}" y2="${y}" stroke="#c53030" stroke-dasharray="5 4"/>`)
    parts.push(
      `<text x="${W - 22}" y="${y - 4}" text-anchor="end" fill="#c53030">OCR pipeline limit in process (${layoutName(limit)}, batch ${limit.batch}): ${limit.itemsPerS.toFixed(0)} items/s</text>`,
    )
  }
  series.forEach((s, j) => {
    parts.push(
      `<rect x="${left + j * 200}" y="${H - 30}" width="12" height="12" fill="${s.color}"/><text x="${left + j * 200 + 18}" y="${H - 20}">${esc(s.name)}</text>`,
    )
  })
  parts.push('</svg>')
  return parts.join('\n') + '\n'
}

/** Said of a section a quick run kept from an earlier run rather than measured. */
function carried(run: { carriedOver?: boolean }): string {
  return run.carriedOver ? ', kept from an earlier run: the quick run does not measure it' : ''
}

/** The direction classifier on onnxruntime-node beside onnxruntime-web, and the native limit, in one sentence. */
function nativeServedText(results: BenchResults): string {
  if (results.nativeError) return `**On onnxruntime-node** the rows failed: \`${results.nativeError.split('\n')[0]}\``
  const run = results.native
  if (!run) return '**On onnxruntime-node**: not measured in this run (`bench/native.ts` measures it alone).'
  const row = (runtime: string) => run.rows.find((r) => r.runtime === runtime)
  const [native, web] = [row('onnxruntime-node'), row('onnxruntime-web')]
  const limit = run.limit.pipelineLimit
  return (
    `**On onnxruntime-node** (\`bench/native.ts\`: a server per runtime, side by side, rows alternating; every other Node row runs on onnxruntime-web): ` +
    `the same example served ${f(native?.requestsPerS)} req/s (p50 ${f(native?.p50Ms)} ms, mean batch ${f(native?.meanBatchSize, 1)}) against ${f(web?.requestsPerS)} on onnxruntime-web; ` +
    `its in-process limit, measured as above, ${f(limit.itemsPerS)} items/s (${layoutName(limit)}, batch ${limit.batch}).` +
    stagesText(run)
  )
}

/** The recognizer and detector on each runtime (older results have no such rows). */
function stagesText(run: NativeRun): string {
  const rows = run.stages ?? []
  const rate = (model: string, runtime: string) => f(rows.find((r) => r.model === model && r.setting === runtime)?.requestsPerS, 1)
  if (rows.length === 0) return ''
  return (
    ` In process, 64 callers: the recognizer ${rate('ocr-recognizer', 'onnxruntime-node')} lines/s against ${rate('ocr-recognizer', 'onnxruntime-web')}, ` +
    `the detector ${rate('ocr-detector', 'onnxruntime-node')} pages/s against ${rate('ocr-detector', 'onnxruntime-web')}.`
  )
}

/** The pipeline's as-shipped row on onnxruntime-node: one sentence, appended to the last line of the WASM table's text. */
function nativePipelineText(run: OcrPipelineRun | undefined): string {
  const row = run?.rows.find((r) => r.recognizer === 'adaptive')
  if (!run || !row) return ' On onnxruntime-node: not measured in this run (the full run measures it).'
  return ` On onnxruntime-node (as shipped, c=${row.concurrency}${carried(run)}): **${f(row.pagesPerS, 2)} pages/s**, p50 ${f(row.p50Ms)} ms, in-process limit ${f(run.limit?.pagesPerS, 2)} pages/s.`
}

/** Pages/s and latency of the OCR pipeline, over its in-process limit, with each stage's share of the batches' execution time. */
function ocrPipelineTable(run: OcrPipelineRun | undefined): string {
  if (!run) {
    return '_Not measured in this run: the full run (`npm run bench`) measures it, or alone: `npx tsx --conditions=edgeserve-source bench/ocr-pipeline.ts`, which merges its rows into bench/results/latest.json and regenerates this page._'
  }
  const pct = (x: number | undefined) => `${Math.round((x ?? 0) * 100)}%`
  const lines = [
    `${run.pagesPerRow} pages per row${run.date ? `, measured ${run.date} (${run.mode})` : ''}${carried(run)}. ` +
      "The client posts from the server's own process: its fetch calls share the server's thread and the machine's 2 cores.",
    '',
  ]
  if (run.limit) {
    const tried = run.limit.byConcurrency.map((r) => `${f(r.pagesPerS, 2)} at ${r.concurrency}`).join(', ')
    lines.push(
      `In-process limit (the pipeline's code with each stage called directly, no HTTP or handles): **${f(run.limit.pagesPerS, 2)} pages/s** (pages/s by pages at once: ${tried}).`,
      '',
    )
  }
  lines.push(
    '| recognizer | c | pages/s | p50 ms | p99 ms | over in-process limit | detect | classify | recognize |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  )
  for (const r of run.rows) {
    lines.push(
      `| ${r.recognizer} | ${r.concurrency} | ${f(r.pagesPerS, 2)} | ${f(r.p50Ms)} | ${f(r.p99Ms)} | ${r.vsLimit === undefined ? '–' : `${f(r.vsLimit, 2)}×`} | ${pct(r.split.detect)} | ${pct(r.split.classify)} | ${pct(r.split.recognize)} |`,
    )
  }
  lines.push(
    '',
    'The p50 and p99 at c = 8 and 32 are mostly waiting: the machine reads about 1.4 pages/s, so with 32 pages in flight a page ' +
      'waits behind the others for 20 s or more, and the last pages of a row wait longest. No page was lost at any concurrency ' +
      '(every row counts only 200s; a failed page fails the run).',
  )
  return lines.join('\n')
}

/** The step load against the autoscaled adder and a fixed maximum, with the count over time. */
function autoscalingTable(run: AutoscalingRun | undefined): string {
  if (!run)
    return '_Measured by the full run (`npm run bench`) only: it takes about a minute. Alone: `npx tsx --conditions=edgeserve-source bench/autoscaling.ts`._'
  const lines = [
    `${run.date ? `Measured ${run.date}${carried(run)}. ` : ''}` +
      `${run.connections} connections for ${run.loadS} s after 2 s idle, then ${run.idleS} s idle; the ramp is the load's first ${run.rampS} s, steady its last ${run.rampS} s.`,
    '',
    '| replicas | requests | req/s | errors | p50 ms | p99 ms | p99 ramp ms | p99 steady ms | most replicas | s to most | s back to fewest |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ]
  for (const r of run.runs) {
    lines.push(
      `| ${r.mode} | ${r.requests} | ${f(r.requestsPerS)} | ${r.errors} | ${f(r.p50Ms)} | ${f(r.p99Ms)} | ${f(r.p99RampMs)} | ${f(r.p99SteadyMs)} | ${r.maxReplicas} | ${f(r.secondsToMax, 1)} | ${f(r.secondsToMin, 1)} |`,
    )
  }
  const scaled = run.runs.find((r) => r.secondsToMax !== null) ?? run.runs[0]!
  // The count each second: the timeline as the dashboard would plot it.
  const perSecond: string[] = []
  for (let s = 0; s <= Math.floor(scaled.timeline.at(-1)!.t); s++) {
    const sample = scaled.timeline.find((x) => x.t >= s)
    if (sample) perSecond.push(String(sample.replicas))
  }
  lines.push('', `Replicas of the autoscaled run, second by second (load from 2 s to ${2 + run.loadS} s): ${perSecond.join(' ')}`)
  return lines.join('\n')
}

/** Where a request's microseconds go, from the in-process request-path rows. */
function requestPathTable(us: Record<string, number>): string {
  const rows: [string, number, string][] = [
    ['Hono route (routing, handler, a text Response)', us.hono!, 'the bare route'],
    ['router (take a replica, give it back)', us.router!, 'measured alone'],
    ['replica (`Replica.fetch`: the instance call, its answer made a Response (`answerOf`, `responseOf`), metrics)', us.replica!, 'measured alone'],
    ['ingress (find the replica set, the `RequestScope`)', us.deployment! - us.hono! - us.router! - us.replica!, 'no-op deployment minus the three rows above'],
    [
      'batch queue and request context (queue, disconnect signal, context, promise plumbing)',
      us.batchedDeployment! - us.deployment!,
      'batched no-op minus no-op deployment',
    ],
    ['of which the queue alone (one call of a no-op batched function)', us.batchQueue!, 'measured alone'],
  ]
  const lines = ['| stage | µs per request | how |', '| --- | ---: | --- |']
  for (const [stage, value, how] of rows) lines.push(`| ${stage} | ${f(value, 2)} | ${how} |`)
  lines.push(`| **no-op deployment, whole** | **${f(us.deployment, 2)}** | through \`app.fetch\` |`)
  lines.push(`| **batched no-op deployment, whole** | **${f(us.batchedDeployment, 2)}** | through \`app.fetch\` |`)
  return lines.join('\n')
}

/** How many of edgeserve's files and functions one batched request runs through (bench/request-path-count.ts). */
function requestPathCountLine(count: { files: number; functions: number; path: Record<string, string[]> } | undefined): string {
  if (!count) return ''
  const files = Object.entries(count.path).map(([file, names]) => `\`${file}\` (${names.length})`)
  return (
    `\n\nOne batched request to a \`/adder\` route on Node, after warm-up, runs through **${count.files} of edgeserve's files and ` +
    `${count.functions} of its functions** (V8 precise coverage with call counts, taken just before and just after it): ${files.join(', ')}.`
  )
}

/** Server CPU per request over HTTP, from the c=64 rows: what parsing and writing HTTP add to the in-process path, in one sentence. */
function httpCostText(rows: Row[]): string {
  const costs: string[] = []
  for (const name of ['hono-hello', 'noop-deployment', 'noop-batched-deployment']) {
    const r = rows.find((x) => x.endpoint === name && x.connections === 64)
    if (!r) continue
    costs.push(`${name} ${r.serverCores === null ? '–' : f((r.serverCores / r.requestsPerS) * 1e6, 1) + ' µs'} (${f(r.requestsPerS)} req/s)`)
  }
  return costs.length === 0 ? 'not measured in this run' : costs.join(', ')
}

/**
 * A thread row's model layout per replica: one ORT thread (EDGESERVE_NUM_THREADS=1), or the shipped
 * default, the replica's share of the cores as that many one-thread instances (`instances: 'auto'`).
 */
function ortThreadsPerReplica(row: { ortThreads: string; replicas: number }, nproc: number): string {
  return row.ortThreads === '1' ? '1 thread' : `cores / replicas (${layoutName({ threads: 1, instances: Math.max(1, Math.floor(nproc / row.replicas)) })})`
}

/**
 * The served OCR's distance from its limit, in two parts: how fast the model
 * ran inside the server, and how much of the time a batch was running.
 */
function ocrServedText(b: OcrServed | undefined): string {
  if (!b || b.batchItemsPerS === null || b.batchItemsPerS === undefined || b.modelBusy === null) return ''
  const limit = `${layoutName(b.runLimit)} (${f(b.runLimit.itemsPerS)} items/s at batch ${b.runLimit.batch})`
  if (b.modelBusy > 1) {
    return (
      `**Where served OCR stands against its limit.** At c=64 the batched OCR row served ${f(b.requestsPerS)} req/s. ` +
      `Its batches overlapped: the example runs one per model instance, and ${f(b.modelBusy, 2)} were in flight on average ` +
      "(the batched method's own time over the row's, from `/-/metrics.json`), so a batch waited at an instance while the " +
      'other ran, and no instance waited for the server to answer one batch and gather the next. The model therefore ran ' +
      `at least at the row's own rate: ${f(b.modelSpeedVsRunLimit, 2)} of the best run measured in process in the same layout, ${limit}. ` +
      "That figure moves with the machine's slow stretches in either process, the server's or the limit's (under What bounds each figure)." +
      modelSpeedReading(b.modelSpeedVsRunLimit)
    )
  }
  return (
    `**Where served OCR stands against its limit.** At c=64 the batched OCR row served ${f(b.requestsPerS)} req/s. ` +
    `Its batches ran at ${f(b.batchItemsPerS)} items/s (items over the batched method's own time, from \`/-/metrics.json\`): ` +
    `${f(b.modelSpeedVsRunLimit, 2)} of the best run measured in process in the same layout, ${limit}. ` +
    `A batch was running ${f(b.modelBusy * 100)}% of the row's time; the rest went to the server's thread between ` +
    "batches: answering the last batch, stacking and cutting the next. The first figure is the model's own speed, and it moves " +
    "with the machine's slow stretches in either process, the server's or the limit's (under What bounds each figure); " +
    'the second is what serving costs the model.' +
    modelSpeedReading(b.modelSpeedVsRunLimit)
  )
}

/** The limit the served OCR ratio divides by: the best cell, measured again beside the served rows. */
function besideText(limit: ModelLimit): string {
  const windows = limit.pipelineLimitBesideServedRows
  if (!windows) return ' The served OCR ratio divides by the best of these.'
  return (
    ` The served OCR ratio divides by the best of these, ${layoutName(limit.pipelineLimit)} at batch ${limit.pipelineLimit.batch}, measured once more after each round ` +
    `of the served OCR rows, while the server had no load: ${windows.map((w) => f(w)).join(', ')} items/s, median ${f(limit.pipelineLimit.itemsPerS)} ` +
    `(${f(limit.pipelineLimitBeforeServedRows)} in the limit phase). This machine's speed moves by up to two times from minute to minute, ` +
    'and the limit phase ends a minute or more before the served rows begin.'
  )
}

/** What this run's model-speed figure says about its ratio, where it is far from 1. */
function modelSpeedReading(speed: number | null): string {
  if (speed === null) return ''
  if (speed > 1.05)
    return " In this run the model ran faster in the server than in the limit's process, so the limit was taken in a slow stretch and the ratio reads high."
  if (speed < 0.8)
    return " In this run the model ran markedly slower in the server than in the limit's process, and that, not the framework, is most of the distance."
  return ''
}

/**
 * The bare route's latency, probed one request at a time while OCR is served
 * at c=64 in process, where the model runs on the server's thread (the
 * thread replicas' probes are columns of their table).
 */
function probeText(results: BenchResults): string {
  const probed = (r: Row | undefined): r is Row => r !== undefined && r.probeP50Ms !== null && r.probeP50Ms !== undefined
  const parts: string[] = []
  for (const endpoint of ['ocr-batched', 'ocr-unbatched']) {
    const r = results.node.find((row) => row.endpoint === endpoint && row.connections === 64)
    if (!probed(r)) continue
    parts.push(
      `${f(r.probeP50Ms, 2)} ms at p50 and ${f(r.probeP99Ms, 2)} at p99 (${r.probes} probes) while ${endpoint === 'ocr-batched' ? 'batched' : 'unbatched'} OCR served ${f(r.requestsPerS)} req/s`,
    )
  }
  if (parts.length === 0) return 'In process, not measured in this run.'
  return `In process, as shipped (${layoutName({ threads: 1, instances: Math.max(1, results.machine.nproc) })}), the bare route answered in ${parts.join('; in ')}.`
}

/** The rows a full run measures once each, beside the rows measured in rounds: one line, req/s (p99 ms). */
function onceEachText(rows: Row[]): string {
  if (rows.length === 0) return ''
  const each = rows.map((r) => `${r.endpoint} at c=${r.connections} ${f(r.requestsPerS)} (${f(r.p99Ms)})`)
  return `\n\nMeasured once each, req/s (p99 ms): ${each.join(', ')}.`
}

/**
 * workerd's rows, one per endpoint: served by workerd directly, beside the same
 * endpoint through wrangler dev, whose proxy and Miniflare's entry Worker
 * bound every row there.
 */
function workerdTable(direct: Row[], viaWrangler: Row[]): string {
  // The c=64 rows only: endpoints measured at c=1 too, or only (a lone request's p50), have that figure in the ratios.
  const endpoints = [...new Set([...direct, ...viaWrangler].filter((r) => r.connections === 64).map((r) => r.endpoint))]
  if (endpoints.length === 0) return '_not measured (see the error below)_'
  const of = (rows: Row[], endpoint: string) => rows.find((r) => r.endpoint === endpoint && r.connections === 64)
  const lines = [
    '| endpoint (c=64) | direct req/s | p50 ms | p99 ms | mean batch | batch items/s | wrangler dev req/s | p99 ms | errors + non-2xx |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ]
  for (const endpoint of endpoints) {
    const d = of(direct, endpoint)
    const w = of(viaWrangler, endpoint)
    const failures = [d, w].reduce((sum, r) => sum + (r ? r.errors + r.non2xx : 0), 0)
    lines.push(
      `| ${endpoint} | ${f(d?.requestsPerS)} | ${f(d?.p50Ms, 2)} | ${f(d?.p99Ms, 2)} | ${f(d?.meanBatchSize, 1)} | ${f(d?.batchItemsPerS)} | ${f(w?.requestsPerS)} | ${f(w?.p99Ms, 2)} | ${failures} |`,
    )
  }
  return lines.join('\n')
}

/**
 * The adaptive comparison: items/s (p99 ms) at c=64 per model and runtime, one column per fixed
 * maxBatchSize and one for adaptive, with its ratio over the best fixed size as the ratio rows
 * count it (bench/adaptive-ratio.ts).
 */
function batchSizeTable(rows: BatchSizeRow[] | undefined): string {
  if (!rows || rows.length === 0) return '_not measured in this run_'
  const settings = [...new Set(rows.map((r) => r.setting))]
  const groups = [...new Set(rows.map((r) => `${r.runtime} ${r.model}`))]
  const lines = [
    `| model | ${settings.map((s) => (s === 'adaptive' ? 'adaptive' : `fixed ${s}`)).join(' | ')} | adaptive / best fixed |`,
    `|---|${settings.map(() => '---:').join('|')}|---:|`,
  ]
  for (const group of groups) {
    const inGroup = rows.filter((r) => `${r.runtime} ${r.model}` === group)
    const cells = settings.map((s) => {
      const r = inGroup.find((row) => row.setting === s)
      return r ? `${f(r.requestsPerS)} (${f(r.p99Ms)})` : '–'
    })
    const [ratio] = Object.values(adaptiveVsBestFixed(inGroup))
    lines.push(`| ${group} | ${cells.join(' | ')} | ${ratio === undefined ? '–' : `${f(ratio, 2)}×`} |`)
  }
  return lines.join('\n')
}

/** Ratios the bench no longer measures, which results stored before may hold: the MLP's ceiling is the JSON route now (workerd_mlp_served_vs_json_route_c64). */
const RETIRED = new Set(['workerd_mlp_served_vs_ceiling_c64'])

/** A ratio as a number; null where it was not measured (or is a yes-or-no one, which no table here shows). */
function ratioOf(results: BenchResults, key: string): number | null {
  const x = results.ratios[key]
  return typeof x === 'number' ? x : null
}

/** How a load row's runs were counted, between the warm-up and the rounds; results stored before the lead-in counted each run from its start. */
function leadIn(leadInS: number | undefined): string {
  return leadInS === undefined
    ? ','
    : `; each run of a load row counts its answers after a lead-in of ${leadInS} s, in which its new connections fill the server's queue;`
}

/** docs/benchmarks.md: bench/template.md with each {{KEY}} filled from the results. */
export function renderReport(results: BenchResults, template: string): { markdown: string; svg: string } {
  const m = results.machine
  const machine = `${m.nproc} CPUs (\`nproc\`), ${m.cpuModel}, ${m.memoryGiB} GiB memory, Node ${m.node} on ${m.platform}. Mode: ${results.mode} (after ${results.settings.warmupS} s of warm-up${leadIn(results.settings.leadInS)} the rows of a ratio run ${results.settings.ratioRepeats} rounds of ${results.settings.roundS} s, each round measuring a row and its baseline back to back: the ratio is the median of the rounds' ratios, a row's req/s the median of its rounds; the adaptive batch-size rows run ${results.settings.adaptiveRounds.count} rounds of ${results.settings.adaptiveRounds.rowS} s, and a row measured once ${results.settings.durationS} s). Run ${results.date}, took ${f(results.elapsedS)} s.`

  const engineLines = ['| workload | engine | items/s | ns/item |', '| --- | --- | ---: | ---: |']
  for (const r of results.engine) engineLines.push(`| ${r.workload} | ${r.engine} | ${f(r.itemsPerS)} | ${f(r.nsPerItem)} |`)

  const configs = results.modelLimit.configs
  const sizes = configs[0]!.rows.map((r) => r.batch)
  const limitLines = [`| what | layout | ${sizes.map((s) => `batch ${s}`).join(' | ')} |`, `| --- | --- | ${sizes.map(() => '---:').join(' | ')} |`]
  for (const config of configs) {
    const layout = layoutName({ threads: config.effectiveNumThreads, instances: config.instances })
    limitLines.push(`| run alone | ${layout} | ${config.rows.map((r) => f(r.itemsPerS)).join(' | ')} |`)
    limitLines.push(`| decode + preprocess + run | ${layout} | ${config.pipeline.map((r) => f(r.itemsPerS)).join(' | ')} |`)
  }
  const decodeMs = configs.map((c) => f(c.decodePreprocessMsPerItem, 3)).join(' / ')
  const prepare = results.prepare ?? []
  // One sentence: each runtime's median and the spread of its rounds (fastest to slowest).
  const prepareParts = prepare.map((p) => `${p.runtime} ${f(p.msPerImage, 3)} (${f(Math.min(...p.rounds), 3)}–${f(Math.max(...p.rounds), 3)})`)
  for (const [runtime, error] of Object.entries(results.prepareErrors ?? {})) prepareParts.push(`${runtime} failed: \`${error.split('\n')[0]}\``)
  const bestAgain = configs
    .filter((c) => c.pipelineBest)
    .map((c) => `${layoutName({ threads: c.effectiveNumThreads, instances: c.instances })} at batch ${c.pipelineBest.batch}: ${f(c.pipelineBest.itemsPerS)}`)
    .join('; ')

  const generationLines = [
    '| batching | tokens/s | time to first token p50 | p95 | mean latency | 16 prompts done in |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
  ]
  for (const g of results.generation ?? []) {
    generationLines.push(
      `| ${g.mode} | ${f(g.tokensPerS)} | ${f(g.ttftP50Ms, 1)} ms | ${f(g.ttftP95Ms, 1)} ms | ${f(g.meanLatencyMs, 1)} ms | ${f(g.totalMs, 1)} ms |`,
    )
  }

  const threadLines = [
    '| OCR replicas on threads | model layout per replica | req/s | p50 ms | p99 ms | mean batch | server cores | load-generator cores | bare route p50 ms | p99 ms |',
    '| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ]
  for (const r of results.nodeThreads) {
    threadLines.push(
      `| ${r.replicas} | ${ortThreadsPerReplica(r, results.machine.nproc)} | ${f(r.requestsPerS)} | ${f(r.p50Ms, 2)} | ${f(r.p99Ms, 2)} | ${f(r.meanBatchSize, 1)} | ${f(r.serverCores, 2)} | ${f(r.loadGeneratorCores, 2)} | ${f(r.probeP50Ms, 2)} | ${f(r.probeP99Ms, 2)} |`,
    )
  }

  const n = results.ratioNotes
  const verdict = (ok: boolean | null) => (ok === null ? 'not measured' : ok ? 'met' : '**missed**')
  const times = (x: number | null) => (x === null ? '–' : `${f(x, 2)}×`)
  /**
   * A ratio's row: its value, and whether it meets its target where it has one; a ratio not measured is neither met nor missed.
   * `what` says what it compares where the results hold no note for it (stored before it was measured).
   */
  const ratioRow = (key: string, target?: Target, what?: string) => {
    const x = ratioOf(results, key)
    const note = n[key] ?? what ?? ''
    if (target === undefined) return `| \`${key}\` | ${times(x)} | – | – | ${note} |`
    if ('atLeast' in target) {
      const value = target.unit === undefined ? times(x) : x === null ? '–' : `${f(x, 1)} ${target.unit}`
      return `| \`${key}\` | ${value} | ≥ ${target.atLeast}${target.unit === undefined ? '×' : ` ${target.unit}`} | ${verdict(x === null ? null : x >= target.atLeast)} | ${note} |`
    }
    return `| \`${key}\` | ${x === null ? '–' : `${f(x, 3)} ${target.unit}`} | ≤ ${target.atMost} ${target.unit} | ${verdict(x === null ? null : x <= target.atMost)} | ${note} |`
  }
  const listed = new Set(WORKERD_RATIOS.map((r) => r.key))
  const ratioLines = [
    '| ratio | value | target | verdict | what it compares |',
    '| --- | ---: | --- | --- | --- |',
    ratioRow('deployment_route_vs_hono_c64', { atLeast: 0.75 }),
    ratioRow('batched_deployment_route_vs_hono_c64', { atLeast: 0.75 }),
    ratioRow('ocr_batched_vs_unbatched_c64', { atLeast: 1.5 }),
    ratioRow('ocr_served_vs_pipeline_limit_c64', { atLeast: 0.8 }),
    ratioRow('ocr_native_vs_wasm_served_c64', { atLeast: 1.6 }, 'the OCR direction example served on onnxruntime-node over onnxruntime-web, c=64'),
    ratioRow('ocr_native_served_vs_pipeline_limit_c64', { atLeast: 0.8 }, 'the native row over its own in-process limit'),
    ratioRow('ocr_recognizer_native_vs_wasm_c64', undefined, 'the OCR recognizer on onnxruntime-node over onnxruntime-web, in process, 64 callers'),
    ratioRow('ocr_detector_native_vs_wasm_c64', undefined, 'the OCR detector on onnxruntime-node over onnxruntime-web, in process, 64 callers'),
    ratioRow('mlp_batched_vs_hono_json_c64', { atLeast: 0.8 }),
    ratioRow('node_threads_2_vs_1_c64', { atLeast: 1.5 }),
    ratioRow('engine_vs_dataloader', { atLeast: 0.8 }),
    ratioRow('c1_added_p50_ms', { atMost: 0.3, unit: 'ms' }),
    ratioRow('workerd_vs_node_c64'),
    // workerd directly: the listed ratios (those with a target, then the watched ones), measured or not, then the others
    // these results hold. Older results have neither these nor the adaptive rows; through wrangler dev, the notes keep them.
    ...WORKERD_RATIOS.map(({ key, target, what }) => ratioRow(key, target, what)),
    ...Object.keys(results.ratios)
      .filter((key) => key.startsWith('workerd_') && key !== 'workerd_vs_node_c64' && !key.endsWith('_wrangler_dev'))
      .filter((key) => !listed.has(key) && !RETIRED.has(key))
      .map((key) => ratioRow(key)),
    ...Object.keys(results.ratios)
      .filter((key) => key.startsWith('adaptive_vs_best_fixed_'))
      .map((key) => ratioRow(key, { atLeast: 0.95 })),
    // Older results have no adaptive_follows_change.
    ...('adaptive_follows_change' in results.ratios ? [ratioRow('adaptive_follows_change', { atLeast: 0.8 })] : []),
  ]

  const fill: Record<string, string> = {
    MACHINE: machine,
    ENGINE: engineLines.join('\n'),
    MODEL_LIMIT:
      limitLines.join('\n') +
      `\n\nDecode + preprocess of the bench's image alone: ${decodeMs} ms per item (per process above; the median of windows spread over each process's run).` +
      (bestAgain
        ? `\n\nEach layout's best pipeline batch size, measured again in longer windows of its own (items/s): ${bestAgain}. The best of many short, noisy rows is also the luckiest, so the first pass only picks the batch size and the layout.` +
          besideText(results.modelLimit)
        : ''),
    REQUEST_PATH: requestPathTable(results.requestPath.microsecondsPerRequest) + requestPathCountLine(results.requestPathCount),
    HTTP_COST: httpCostText(results.node),
    // The rows measured in rounds in the table; the full run's rows measured once each in a line under it.
    NODE: loadTable(results.node.filter((r) => (r.repeats ?? 1) > 1)) + onceEachText(results.node.filter((r) => (r.repeats ?? 1) === 1)),
    THREADS: threadLines.join('\n'),
    PROBE: probeText(results),
    GENERATION: generationLines.join('\n'),
    WORKERD:
      workerdTable(results.workerdDirect ?? [], results.workerd) +
      (results.workerdDirectError ? `\n\nworkerd direct failed: \`${results.workerdDirectError.split('\n')[0]}\`` : '') +
      (results.workerdError ? `\n\nwrangler dev failed: \`${results.workerdError.split('\n')[0]}\`` : ''),
    WORKERD_HOP: hopTable(results.workerdHop ?? []),
    ISOLATE_LIMITS: isolateLimitTable(results.isolateLimits ?? []),
    ISOLATE_VS_NODE: isolateVersusNodeText(results.ocrIsolateAgainstNode, ratioOf(results, 'workerd_ocr_isolate_vs_node_one_thread')),
    RATIOS: ratioLines.join('\n') + failedSectionsText(results.sectionErrors),
    ...inWorkerFigures(results),
    OCR_SERVED: [ocrServedText(results.ocrServedBreakdown), nativeServedText(results)].filter(Boolean).join(' '),
    PREPARE: prepareParts.length === 0 ? 'not measured in this run' : prepareParts.join(', '),
    OCR_PIPELINE: ocrPipelineTable(results.ocrPipeline) + nativePipelineText(results.ocrPipelineNative),
    AUTOSCALING: autoscalingTable(results.autoscaling),
    BATCH_SIZES: batchSizeTable(results.batchSizes),
    ADAPTIVE_STAGES: results.adaptiveStages
      ? batchSizeTable(results.adaptiveStages.rows)
      : '_not measured yet: `npm run bench` (full) or bench/adaptive-stages.ts alone_',
  }
  const markdown = template.replace(/\{\{(\w+)\}\}/g, (_, key: string) => fill[key] ?? `{{${key}}}`)
  return { markdown, svg: chart(results) }
}

/** Under the ratios: the sections this run lost, and why, so an absent row is never read as unmeasured by choice. */
function failedSectionsText(errors: Record<string, string> | undefined): string {
  const failed = Object.entries(errors ?? {})
  if (failed.length === 0) return ''
  return '\n\n' + failed.map(([name, error]) => `**${name} failed in this run:** \`${error.split('\n')[0]}\``).join('\n\n')
}

/**
 * What one request costs at c=64 on each route (1e6 / req/s), and the hop's parts: workerd's own (by
 * stub.fetch and by RPC), ours, the batch queue's; then the same for the house-price POST, beside
 * its model run in the Worker with no object.
 */
function hopTable(hops: HopBreakdown[]): string {
  if (hops.length === 0) return '_not measured_'
  // Through wrangler dev its proxy takes milliseconds a request, which the hop's microseconds vanish in: direct only, where measured.
  if (hops.some((h) => h.way === 'direct')) hops = hops.filter((h) => h.way === 'direct')
  const us = (x: number | null | undefined) => (x === null || x === undefined ? '–' : `${f(x)} µs`)
  const lines = [
    "| workerd | bare route | raw hop | raw RPC | no-op deployment | no-op batched | workerd's hop | workerd's RPC hop | ours | batch queue |",
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ]
  for (const h of hops) {
    lines.push(
      `| ${h.way} | ${us(h.helloUs)} | ${us(h.rawHopUs)} | ${us(h.rawRpcUs)} | ${us(h.noopUs)} | ${us(h.noopBatchedUs)} | ${us(h.workerdHopUs)} | ${us(h.workerdRpcHopUs)} | ${us(h.oursUs)} | ${us(h.batchUs)} |`,
    )
  }
  // Results stored before the JSON rows existed have no such figures.
  const json = hops.filter((h) => h.jsonUs !== undefined && h.jsonUs !== null)
  if (json.length === 0) return lines.join('\n')
  lines.push(
    '',
    "| workerd, house-price POST | JSON route | raw JSON hop | MLP batched | workerd's hop | the MLP's deployment | the model in the Worker |",
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  )
  for (const h of json) {
    lines.push(
      `| ${h.way} | ${us(h.jsonUs)} | ${us(h.rawHopJsonUs)} | ${us(h.mlpUs)} | ${us(h.workerdJsonHopUs)} | ${us(h.mlpOverRawUs)} | ${us(h.mlpInWorkerUs)} |`,
    )
  }
  return lines.join('\n')
}

/**
 * The MLP's model run in the Worker, against workerd directly: its share of the bare route (a ratio of
 * medians, the two rows being in different groups), and the shipped MLP over it round by round; and
 * workerd's own hop for the house-price POST over the JSON route, round by round (one group).
 */
function inWorkerFigures(results: BenchResults): { MLP_IN_WORKER: string; MLP_VS_IN_WORKER: string; RAW_HOP_VS_JSON_ROUTE: string } {
  const direct = (results.workerdHop ?? []).find((h) => h.way === 'direct')
  const share = direct?.mlpInWorkerUs && direct.helloUs ? direct.helloUs / direct.mlpInWorkerUs : null
  const ratio = ratioOf(results, 'workerd_mlp_batched_vs_in_worker_c64')
  const row = (endpoint: string) => (results.workerdDirect ?? []).find((r) => r.endpoint === endpoint && r.connections === 64)
  const rawHop = row('raw-hop-json')
  const json = row('hono-json')
  const hop = rawHop && json ? roundByRound(rawHop.roundsRequestsPerS, json.roundsRequestsPerS) : null
  const figure = (x: number | null) => (x === null ? '(not measured in this run)' : f(x, 2))
  return { MLP_IN_WORKER: figure(share), MLP_VS_IN_WORKER: figure(ratio), RAW_HOP_VS_JSON_ROUTE: figure(hop) }
}

/** The OCR pipeline's windows in one isolate and in Node on one thread, and their ratio. */
function isolateVersusNodeText(pair: IsolateAgainstNode | undefined, ratio: number | null): string {
  if (!pair || pair.isolate.length === 0) return '_not measured_'
  const windows = (xs: number[]) => xs.map((x) => f(x)).join(', ')
  return `at batch ${pair.batch}, workerd ${windows(pair.isolate)} and Node ${windows(pair.node)} items/s, ${f(ratio, 2)}× round by round`
}

/** items/s per batch size of each model in one isolate, one row per model and mode. */
function isolateLimitTable(limits: IsolateLimitRow[]): string {
  if (limits.length === 0) return '_not measured_'
  const batches = [...new Set(limits.map((l) => l.batch))].sort((a, b) => a - b)
  const lines = [`| model | work | ${batches.map((b) => `batch ${b}`).join(' | ')} |`, `| --- | --- | ${batches.map(() => '---:').join(' | ')} |`]
  const names: Record<string, string> = { 'ocr pipeline': 'decode + preprocess + run', 'ocr run': 'run', 'mlp run': 'stack + run' }
  for (const key of [...new Set(limits.map((l) => `${l.model} ${l.mode}`))]) {
    const [model, mode] = key.split(' ')
    const cells = batches.map((b) => f(limits.find((l) => l.model === model && l.mode === mode && l.batch === b)?.itemsPerS))
    lines.push(`| ${model === 'ocr' ? 'OCR direction' : 'house-price MLP'} | ${names[key] ?? mode} | ${cells.join(' | ')} |`)
  }
  return lines.join('\n')
}
