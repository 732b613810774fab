/**
 * `npm run bench` (`tsx bench/run.ts [--quick]`): every benchmark in one run.
 * Writes bench/results/latest.json, docs/images/benchmarks.svg and
 * docs/benchmarks.md (from bench/template.md). Each measured piece runs in a
 * process of its own: the engine, the request path, each model-limit config,
 * each server; the load generator (autocannon) runs here, apart from the
 * servers, and every load row records the CPU both sides used.
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { availableParallelism, cpus, totalmem } from 'node:os'
import { execSync } from 'node:child_process'
import { ROOT, TSX, WRANGLER_DEV, WRANGLER_READY, median, nearestMedian, quick, roundByRound, runJsonChild, startChild } from './lib.js'
import { ENDPOINTS as E, batchSizeEndpoints, loadSpec, prime, type Endpoint } from './endpoints.js'
import { FIXED_SIZES, OCR_LATENCY_TARGET_MS } from './apps/batch-sizes.js'
import { openLoop, type OpenLoopRow } from './open-loop.js'
import { LEAD_IN_S, interleavedRows, type LoadRow } from './http.js'
import { layoutName } from './layout.js'
import { limitBeside, measureModelLimit } from './model-limit.js'
import { prepareInChromium, prepareOverHttp, type PrepareRow } from './prepare.js'
import { renderReport, type AutoscalingRun, type BatchSizeRow as ReportedBatchSizeRow, type OcrPipelineRun } from './report.js'
import { isolateAgainstNode, isolateLimitBeside, measureIsolateLimits, type IsolateAgainstNode, type IsolateLimitRow } from './isolate-limit.js'
import { workerdRatios } from './workerd-ratios.js'
import { adaptiveVsBestFixed } from './adaptive-ratio.js'
import type { NativeRun } from './native.js'

/**
 * Every Node row but the native ones runs on onnxruntime-web, as before onnxruntime-node was a
 * devDependency ('auto' would pick it now): its children inherit this, and the native rows
 * (section 3c) set onnxruntime-node for their own processes.
 */
process.env.EDGESERVE_ONNX_RUNTIME = 'onnxruntime-web'

const started = Date.now()
// Quick rows are 3 s: p50s of 100 ms need more than a second's worth of samples.
const durationS = quick ? 3 : 10
const warmupS = quick ? 0.5 : 3
/** How rows are measured: `count` rounds, round-robin, each row running `rowS` in each round. */
interface Rounds {
  count: number
  rowS: number
}
/**
 * The rows that enter a ratio: five short rounds rather than three long ones. A shared machine's
 * speed swings within seconds (the bare route read 16k to 44k req/s in the one-second windows of a
 * single minute), and the more rounds a median takes, the less one slow stretch moves it. Over such
 * a minute, three rounds of 3 s put the no-op deployment at 0.71 to 0.96 of the bare route (true
 * ratio 0.86), five rounds of 2 s at 0.76 to 0.92.
 */
const RATIO: Rounds = { count: 5, rowS: quick ? 2 : 6 }
/** A row measured once. */
const ONCE: Rounds = { count: 1, rowS: durationS }
/**
 * The adaptive batch-size rows: six rounds of half a row's length, rather than three of a whole
 * one. Their ratio judges each round against the size the other rounds chose (bench/adaptive-ratio.ts),
 * so the more rounds there are, the more each choice rests on and the less one slow stretch moves
 * the median of the rounds. Row length showed no effect: on Node, adaptive read 0.95 and 0.91 of
 * the best fixed size in a quick run with 2 s rows, 1.00 and 1.03, then 0.97 and 0.90, in two with 3 s rows.
 */
const ADAPTIVE_ROUNDS: Rounds = quick ? { count: 3, rowS: durationS } : { count: 6, rowS: durationS / 2 }
/** The open-loop latency rows' rounds, each durationS long: a p99 needs the samples more than the rounds. */
const OPEN_LOOP_ROUNDS = 3
const log = (message: string) => console.error(`[bench ${((Date.now() - started) / 1000).toFixed(0)}s] ${message}`)
/** A failed section's error as the results keep it: its message, cut to `max` characters. */
const errorText = (error: unknown, max = 2000) => (error instanceof Error ? error.message.slice(0, max) : String(error))

type Row = LoadRow & { endpoint: string }

interface Server {
  base: string
  group: number
}

/**
 * While OCR is served at c=64, GET the bare route one request at a time:
 * what a model run costs the requests that share the server's thread.
 */
const PROBE = E.hello.path

/** One row to measure: an endpoint on a server, and how the log names it. */
interface RowSpec {
  server: Server
  endpoint: Endpoint
  label: string
}

/**
 * The rows at `c` connections, interleaved over `rounds`, each probed with `probe` if given;
 * `afterRound` runs after each round, with no load on the server. On workerd, a deployment's
 * row also counts the calls into its Durable Objects and the items they carried.
 */
async function interleaved(target: string, specs: RowSpec[], c: number, rounds: Rounds, probe?: string, afterRound?: () => Promise<unknown>): Promise<Row[]> {
  for (const { server, endpoint } of specs) await prime(server.base, endpoint)
  const loads = specs.map(({ server, endpoint }) =>
    loadSpec(endpoint, server.base, {
      target,
      connections: c,
      durationS: rounds.rowS,
      warmupS,
      serverGroup: server.group,
      ...(probe === undefined ? {} : { probe }),
      ...(target.startsWith('workerd') && endpoint.deployment !== undefined ? { objectCalls: true } : {}),
    }),
  )
  const measured = await interleavedRows(loads, rounds.count, afterRound)
  return measured.map((row, i) => {
    const { endpoint, label } = specs[i]!
    log(
      `${target} ${label} c=${c}: ${row.requestsPerS.toFixed(0)} req/s, p50 ${row.p50Ms.toFixed(2)} ms, p99 ${row.p99Ms.toFixed(2)} ms, ` +
        `batch ${row.meanBatchSize?.toFixed(1) ?? '-'}` +
        (row.batchItemsPerS === null ? '' : ` (batches ran ${row.batchItemsPerS.toFixed(0)} items/s)`) +
        `, cores: server ${row.serverCores?.toFixed(2) ?? '-'} load ${row.loadGeneratorCores.toFixed(2)}` +
        (row.probeP50Ms === null ? '' : `, ${probe} p50 ${row.probeP50Ms.toFixed(2)} ms p99 ${row.probeP99Ms!.toFixed(2)} ms`),
    )
    return { ...row, endpoint: endpoint.name }
  })
}

/** Rows for `endpoints` on one server, interleaved. */
const rows = (
  target: string,
  server: Server,
  endpoints: Endpoint[],
  c: number,
  rounds = ONCE,
  probe?: string,
  afterRound?: () => Promise<unknown>,
): Promise<Row[]> =>
  interleaved(
    target,
    endpoints.map((endpoint) => ({ server, endpoint, label: endpoint.name })),
    c,
    rounds,
    probe,
    afterRound,
  )

/** One endpoint's rows on each of `servers`, interleaved. */
const rowsAcross = (target: string, servers: Server[], endpoint: Endpoint, c: number, rounds: Rounds, probe?: string): Promise<Row[]> =>
  interleaved(
    target,
    servers.map((server, i) => ({ server, endpoint, label: `${endpoint.name}, server ${i + 1}` })),
    c,
    rounds,
    probe,
  )

async function withServer<R>(argv: string[], ready: RegExp, env: Record<string, string>, use: (server: Server) => Promise<R>): Promise<R> {
  const child = await startChild(argv, ready, env, 90_000)
  try {
    return await use({ base: child.match[1]!, group: child.child.pid! })
  } finally {
    await child.stop()
  }
}
const nodeServer = <R>(args: string[], env: Record<string, string>, use: (server: Server) => Promise<R>) =>
  withServer([process.execPath, TSX, 'bench/server.ts', ...args], /READY (http:\/\/\S+)/, env, use)

/** Node servers started together, one per environment, and stopped together after `use`. */
async function nodeServers<R>(args: string[], envs: Record<string, string>[], use: (servers: Server[]) => Promise<R>): Promise<R> {
  const started = await Promise.allSettled(
    envs.map((env) => startChild([process.execPath, TSX, 'bench/server.ts', ...args], /READY (http:\/\/\S+)/, env, 90_000)),
  )
  const children = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []))
  try {
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected')
    if (failed) throw failed.reason
    return await use(children.map((child) => ({ base: child.match[1]!, group: child.child.pid! })))
  } finally {
    await Promise.all(children.map((child) => child.stop()))
  }
}

function machine() {
  const cpuModel = /model name\s*:\s*(.+)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? cpus()[0]?.model ?? 'unknown'
  let nproc = String(availableParallelism())
  try {
    nproc = execSync('nproc').toString().trim()
  } catch {
    // keep availableParallelism()
  }
  return {
    nproc: Number(nproc),
    cpuModel,
    memoryGiB: +(totalmem() / 2 ** 30).toFixed(1),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
  }
}

// 1. The engine, and the request path in process
log('engine')
const engine = await runJsonChild<{ workload: string; engine: string; itemsPerS: number; nsPerItem: number; vsDataLoader: number }[]>(
  'bench/engine.ts',
  quick ? ['--quick'] : [],
)
log('request path in process')
const requestPath = await runJsonChild<{ microsecondsPerRequest: Record<string, number> }>('bench/request-path.ts', quick ? ['--quick'] : [])
log('request path: files and functions')
const requestPathCount = await runJsonChild<{ files: number; functions: number; path: Record<string, string[]> }>('bench/request-path-count.ts', [])

// 2. The model's limit, and the pipeline's: one process per thread count
log('model and pipeline limits')
const modelLimit = await measureModelLimit({ quick })

// 2b. Static against continuous batching for text generation
log('continuous batching')
const generation = await runJsonChild<{ mode: string; tokensPerS: number; ttftP50Ms: number; ttftP95Ms: number; meanLatencyMs: number; totalMs: number }[]>(
  'bench/continuous.ts',
  quick ? ['--quick'] : [],
)

// 3. Node over loopback HTTP: the examples as shipped beside their baselines
log('node server')
/** Connection counts with rows: quick mode measures only the rows the ratios need (c=64, and c=1 for the added p50), so that it ends within about ten minutes. */
const CONCURRENCY = quick ? [1, 64] : [1, 16, 64]
// The OCR limit's best cell, measured again after each round of the served OCR rows (see limitBeside()).
// Started here, so that it loads and warms up while the server does.
const beside = limitBeside(modelLimit.pipelineLimit, { quick })
const limitWindows: number[] = []
/** Decode + preprocess of the bench's image on each runtime (bench/prepare.ts), measured while its server is idle. */
const PREPARE_ROUNDS = quick ? 9 : 15
const prepare: PrepareRow[] = []
const prepareErrors: Record<string, string> = {}
/** One runtime's row; a failure is recorded for the report, and the rows measured beside it go on. */
async function measurePrepare(runtime: string, measure: () => Promise<PrepareRow>): Promise<void> {
  try {
    prepare.push(await measure())
  } catch (error) {
    prepareErrors[runtime] = errorText(error, 500)
    log(`decode + preprocess on ${runtime} failed: ${prepareErrors[runtime]}`)
  }
}
/**
 * Adaptive against every fixed maxBatchSize, per model and runtime, at c=64, round-robin in one
 * server, over ADAPTIVE_ROUNDS in quick mode too: on a shared machine one row's req/s moves
 * by up to 2x with the CPU the server gets (the house-price rows followed the server's cores, 0.4
 * to 0.75), and the ratio takes the best of six fixed rows, the luckiest of them too.
 */
type BatchSizeRow = Row & { runtime: string; model: string; setting: string }
const batchSizes: BatchSizeRow[] = []
async function measureBatchSizes(target: string, server: Server, model: 'ocr' | 'mlp'): Promise<void> {
  const measured = await rows(target, server, batchSizeEndpoints(model, FIXED_SIZES), 64, ADAPTIVE_ROUNDS)
  const settings = [...FIXED_SIZES.map(String), 'adaptive']
  measured.forEach((row, i) => batchSizes.push({ ...row, runtime: target, model: model === 'ocr' ? 'ocr-direction' : 'house-price', setting: settings[i]! }))
}
/**
 * The direction classifier with `adaptive: { latencyTargetMs }` and at each fixed size under an
 * open-loop (Poisson) load at 60% of the best fixed size's closed-loop req/s at c=64: its p99
 * against the target, beside the fixed sizes' (the issue asks for the target wherever some fixed
 * setting meets it). Rows interleaved as the others; each row's p99 is the median over rounds.
 */
type OpenLoopResult = OpenLoopRow & { setting: string }
const openLoopRows: OpenLoopResult[] = []
let openLoopRate = 0
async function measureOpenLoop(server: Server): Promise<void> {
  const fixed = batchSizes.filter((r) => r.runtime === 'node' && r.model === 'ocr-direction' && r.setting !== 'adaptive')
  openLoopRate = 0.6 * Math.max(...fixed.map((r) => r.requestsPerS))
  const settings = [...FIXED_SIZES.map(String), 'adaptive-target']
  const paths = [...FIXED_SIZES.map((n) => `/sizes/ocr/${n}`), '/sizes/ocr/target']
  const body = E.ocrBatched.body
  const spec = (path: string, durationS: number, seed: number) => ({
    url: server.base + path,
    body,
    contentType: E.ocrBatched.contentType,
    ratePerS: openLoopRate,
    durationS,
    maxInFlight: 256,
    seed,
  })
  for (const path of paths) {
    await prime(server.base, { ...E.ocrBatched, path })
    await openLoop(spec(path, warmupS + 0.5, 99))
  }
  const runs = paths.map((): OpenLoopRow[] => [])
  for (let round = 0; round < OPEN_LOOP_ROUNDS; round++) {
    for (const [i, path] of paths.entries()) runs[i]!.push(await openLoop(spec(path, durationS, round + 1)))
  }
  runs.forEach((rounds, i) => {
    const p99 = median(rounds.map((r) => r.p99Ms))
    const row = nearestMedian(rounds, (r) => r.p99Ms)
    openLoopRows.push({ ...row, p99Ms: p99, setting: settings[i]! })
    log(
      `node open loop ${settings[i]} at ${openLoopRate.toFixed(0)}/s: p50 ${row.p50Ms.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms (target ${OCR_LATENCY_TARGET_MS}), answered ${row.answeredPerS.toFixed(0)}/s, dropped ${row.dropped}, failed ${row.failed}`,
    )
  })
}
const nodeRows = await nodeServer([], {}, async (server): Promise<Row[]> => {
  const out: Row[] = []
  // The ratio rows at c=64, round-robin with their baselines.
  out.push(...(await rows('node', server, [E.hello, E.noop, E.noopBatched], 64, RATIO)))
  out.push(...(await rows('node', server, [E.ocrBatched, E.ocrUnbatched], 64, RATIO, PROBE, async () => limitWindows.push(await beside.measure()))))
  await beside.stop() // done with it; the finally below covers a failure before here
  // Not earlier: the limit process warms its model up while the server starts.
  await measurePrepare('node', () => prepareOverHttp('node', server.base, PREPARE_ROUNDS))
  out.push(...(await rows('node', server, [E.mlpBatched, E.honoJson], 64, RATIO)))
  out.push(...(await rows('node', server, [E.jsonWeb, E.jsonHelpers], 64, RATIO)))
  // At c=1 the p50 moves by hundredths of a millisecond from run to run: one round in quick mode.
  out.push(...(await rows('node', server, [E.mlpBatchedT0, E.mlpUnbatched], 1, quick ? ONCE : RATIO)))
  await measureBatchSizes('node', server, 'ocr')
  await measureOpenLoop(server)
  await measureBatchSizes('node', server, 'mlp')
  // The rest of the picture, once each (the full run).
  if (!quick) {
    for (const c of CONCURRENCY.filter((c) => c !== 64)) out.push(...(await rows('node', server, [E.ocrBatched, E.ocrUnbatched], c)))
    for (const c of CONCURRENCY.filter((c) => c !== 1)) out.push(...(await rows('node', server, [E.mlpBatchedT0, E.mlpUnbatched], c)))
  }
  return out
}).finally(() => beside.stop())
log(
  `OCR limit beside the served rows: ${limitWindows.map((w) => w.toFixed(0)).join(', ')} items/s (first pass ${modelLimit.pipelineLimit.itemsPerS.toFixed(0)})`,
)
modelLimit.pipelineLimitBeforeServedRows = modelLimit.pipelineLimit.itemsPerS
modelLimit.pipelineLimit = { ...modelLimit.pipelineLimit, itemsPerS: median(limitWindows) }
modelLimit.pipelineLimitBesideServedRows = limitWindows

// 3b. OCR replicas on worker threads: one against two, one ORT thread each (EDGESERVE_NUM_THREADS=1),
// so that the ratio says how replicas scale rather than how ORT's own threads do. The full run adds
// the shipped default, where replicas split the machine's cores between them.
// The two servers run side by side and their rows alternate, as a ratio's rows do in one server.
const threadRows: (Row & { replicas: number; ortThreads: string })[] = []
for (const ortThreads of quick ? ['1'] : ['1', 'default']) {
  log(`node servers, OCR on 1 and on 2 thread replicas, ORT threads: ${ortThreads}`)
  const env = (replicas: number): Record<string, string> => ({
    BENCH_OCR_REPLICAS: String(replicas),
    ...(ortThreads === '1' ? { EDGESERVE_NUM_THREADS: '1' } : {}),
  })
  const rounds = ortThreads === '1' ? RATIO : ONCE
  const pair = await nodeServers(['--threads'], [env(1), env(2)], (servers) => rowsAcross('node-threads', servers, E.ocrBatched, 64, rounds, PROBE))
  pair.forEach((row, i) => threadRows.push({ ...row, replicas: i + 1, ortThreads }))
}

// 3c. The OCR direction example on onnxruntime-node against onnxruntime-web, two servers side by side,
// and the native row against its own in-process limit (bench/native.ts).
log('node: onnxruntime-node against onnxruntime-web')
let native: NativeRun | undefined
let nativeError: string | undefined
try {
  native = await runJsonChild<NativeRun>('bench/native.ts', quick ? ['--quick'] : [])
} catch (error) {
  nativeError = errorText(error)
  log(`onnxruntime-node rows failed: ${nativeError}`)
}

// 4. workerd, where it runs: against workerd directly (bench/workerd-direct.ts: workerd serves the
// built Worker on its own socket) and through wrangler dev (Miniflare's entry Worker and its proxy in front).
// Without wrangler's local observability, which writes a trace of every request to disk; V8's old
// generation starting at 8 MB, so workerd collects as often as 1.20260426 did (test/support/wrangler-dev.ts).
// bench/workerd-direct.ts reads the same variable, so both ways run workerd with the same V8 flag.
const WORKERD_ENV = { X_LOCAL_OBSERVABILITY: 'false', MINIFLARE_WORKERD_V8_FLAGS: '--initial-old-space-size=8' }
/**
 * The workerd rows at c=64, each group round-robin: the hop (bare route, workerd's own hop into an
 * object with nothing of ours by stub.fetch and by RPC, a no-op deployment, a no-op batched one), then
 * each model batched, unbatched and run in the Worker for each request (no object); the MLP also
 * beside its twin with one object call per request (`coalesceCalls: false`), a Worker route reading
 * the same JSON and that POST forwarded to an object with nothing of ours.
 */
const WORKERD_GROUPS = [
  [E.hello, E.rawHop, E.rawRpc, E.noop, E.noopBatched],
  [E.ocrBatched, E.ocrUnbatched, E.ocrInWorker],
  [E.mlpBatched, E.mlpUnbatched, E.mlpSingleCalls, E.honoJson, E.rawHopJson, E.mlpInWorker],
]
/**
 * A lone request (c=1, one connection): the MLP with no batch wait, gathered, and its twin with one
 * object call per request, round-robin, so that what gathering adds to a p50 is taken round by round.
 * Not the MLP as shipped: its batchWaitTimeoutS holds a lone request 0.1 s, so a 2 s row held about 19
 * answers, and four repeats read -0.49 to +0.99 ms, wider than the 0.3 ms the figure is held to; with no
 * wait, rows hold about 2,000 answers and read 0.17, 0.31, 0.21 and -0.03 ms.
 */
const WORKERD_C1: Rounds = { count: 3, rowS: 2 }
/** The workerd rows; `afterOcrRound` runs after each round of the OCR group, with no load on the server. */
const workerdServed = async (target: string, server: Server, rounds: Rounds, afterOcrRound?: () => Promise<unknown>): Promise<Row[]> => {
  const out: Row[] = []
  for (const group of WORKERD_GROUPS)
    out.push(...(await rows(target, server, group, 64, rounds, undefined, group.includes(E.ocrBatched) ? afterOcrRound : undefined)))
  out.push(...(await rows(target, server, [E.mlpBatchedT0, E.mlpT0SingleCalls], 1, WORKERD_C1)))
  return out
}
/** Each model's limit in one isolate (bench/isolate-limit.ts): OCR with and without its decode + preprocess, the MLP's run with its stack(). */
const LIMIT_BATCHES = quick ? [1, 8, 32] : [1, 4, 8, 16, 32]
const ISOLATE_CASES = [
  { model: 'ocr' as const, mode: 'pipeline' as const, batches: LIMIT_BATCHES },
  { model: 'ocr' as const, mode: 'run' as const, batches: LIMIT_BATCHES },
  { model: 'mlp' as const, mode: 'run' as const, batches: LIMIT_BATCHES },
]
log('workerd direct (its own socket, no Miniflare or wrangler dev)')
let workerdDirectRows: Row[] = []
let isolateLimits: IsolateLimitRow[] = []
let ocrIsolateLimitBeside: { batch: number; windows: number[] } | undefined
let ocrIsolateAgainstNode: IsolateAgainstNode | undefined
let workerdDirectError: string | undefined
try {
  ;[workerdDirectRows, isolateLimits] = await withServer(
    [process.execPath, TSX, 'bench/workerd-direct.ts'],
    /READY (http:\/\/\S+)/,
    WORKERD_ENV,
    async (server) => {
      // Before the served rows, with no load on the server: OCR's best cell is then measured again
      // after each round of its served rows, and that is the ceiling its served ratio divides by.
      const limits = await measureIsolateLimits(server.base, ISOLATE_CASES, quick ? 3 : 7)
      for (const l of limits) log(`workerd isolate limit ${l.model} ${l.mode} batch ${l.batch}: ${l.itemsPerS.toFixed(0)} items/s`)
      const ocrBest = limits.filter((l) => l.model === 'ocr' && l.mode === 'pipeline').reduce((a, b) => (b.itemsPerS > a.itemsPerS ? b : a))
      ocrIsolateAgainstNode = await isolateAgainstNode(server.base, ocrBest, quick ? 3 : 5, { quick })
      log(
        `ocr pipeline batch ${ocrBest.batch} in one isolate against Node on one thread: ${ocrIsolateAgainstNode.isolate.map((w) => w.toFixed(0)).join(', ')} against ${ocrIsolateAgainstNode.node.map((w) => w.toFixed(0)).join(', ')} items/s`,
      )
      const beside = isolateLimitBeside(server.base, ocrBest)
      ocrIsolateLimitBeside = { batch: ocrBest.batch, windows: beside.windows }
      // Every round in quick mode too: the workerd ratios rest on these rows alone.
      const served = await workerdServed('workerd-direct', server, RATIO, beside.measure)
      log(`workerd isolate limit ocr pipeline batch ${ocrBest.batch} beside the served rows: ${beside.windows.map((w) => w.toFixed(0)).join(', ')} items/s`)
      return [served, limits] as const
    },
  )
} catch (error) {
  workerdDirectError = errorText(error)
  log(`workerd direct failed: ${workerdDirectError}`)
}

log('wrangler dev')
let workerdRows: Row[] = []
let workerdError: string | undefined
try {
  workerdRows = await withServer(
    WRANGLER_DEV,
    WRANGLER_READY,
    WORKERD_ENV,
    // Quick mode: only the row workerd_vs_node_c64 needs; the workerd_* ratios take the direct rows.
    async (server) => {
      await measurePrepare('workerd', () => prepareOverHttp('workerd', server.base, PREPARE_ROUNDS))
      await measureBatchSizes('workerd', server, 'ocr')
      return quick ? await rows('workerd', server, [E.ocrBatched], 64) : await workerdServed('workerd', server, RATIO)
    },
  )
} catch (error) {
  workerdError = errorText(error)
  log(`workerd failed: ${workerdError}`)
}

// 4b. Decode + preprocess in headless Chromium
log('chromium: decode + preprocess')
await measurePrepare('chromium', () => prepareInChromium(PREPARE_ROUNDS))
for (const row of prepare) log(`decode + preprocess on ${row.runtime}: ${row.msPerImage.toFixed(3)} ms per image`)

// What the quick run does not measure it carries over from the last results, each section with
// the date it was measured (the report says so): a quick run does not erase the slow pieces' rows.
const previous = (() => {
  try {
    return JSON.parse(readFileSync(`${ROOT}/bench/results/latest.json`, 'utf8')) as Record<string, unknown>
  } catch {
    return {}
  }
})()
const carriedOver = <T>(key: string): T | undefined => {
  const section = previous[key] as T | undefined
  return section && { ...section, carriedOver: true }
}

/**
 * The full run's long sections, each in its own child process. One that fails (a non-200 under
 * load, a crash) is logged and reported, and the run goes on: an hour of sections already
 * measured is not thrown away for it.
 */
const sectionErrors: Record<string, string> = {}
async function section<T>(name: string, measure: () => Promise<T>): Promise<T | undefined> {
  log(name)
  try {
    return await measure()
  } catch (error) {
    sectionErrors[name] = errorText(error)
    log(`${name} failed: ${sectionErrors[name]}`)
    return undefined
  }
}

// 4b. The OCR pipeline (three deployments through handles), its own server and load.
// At about a page a second it does not fit the quick run.
const ocrPipeline: OcrPipelineRun | undefined = quick
  ? carriedOver<OcrPipelineRun>('ocrPipeline')
  : // --print-only: this run writes latest.json and the report itself.
    await section('OCR pipeline', () => runJsonChild<OcrPipelineRun>('bench/ocr-pipeline.ts', ['--print-only']))
// The same pipeline on onnxruntime-node, at c=8 only: its pages/s beside the rows above.
const ocrPipelineNative: OcrPipelineRun | undefined = quick
  ? carriedOver<OcrPipelineRun>('ocrPipelineNative')
  : await section('OCR pipeline on onnxruntime-node', () =>
      runJsonChild<OcrPipelineRun>('bench/ocr-pipeline.ts', ['--print-only', '--concurrency', '8'], { EDGESERVE_ONNX_RUNTIME: 'onnxruntime-node' }),
    )

// 4c. Autoscaling under a step load (idle, c=64, idle), against a fixed maximum: about a minute, so full runs only.
const autoscaling: AutoscalingRun | undefined = quick
  ? carriedOver<AutoscalingRun>('autoscaling')
  : await section('autoscaling step load', () => runJsonChild<AutoscalingRun>('bench/autoscaling.ts', ['--print-only']))

// 4d. The OCR recognizer and detector, adaptive against each fixed size, in process: some six
// minutes at their few items a second, so full runs only.
type AdaptiveStages = { rows: ReportedBatchSizeRow[]; ratios: Record<string, number>; ratioNotes: Record<string, string> }
const adaptiveStages = quick
  ? carriedOver<AdaptiveStages>('adaptiveStages')
  : await section('OCR recognizer and detector, adaptive against fixed sizes', () => runJsonChild<AdaptiveStages>('bench/adaptive-stages.ts', ['--print-only']))

// 4e. Adaptive following a cost that changes while served: a server per setting, about a minute, so full runs only.
type AdaptiveFollows = { rows: unknown[]; ratios: Record<string, number>; ratioNotes: Record<string, string> }
const adaptiveFollows = quick
  ? carriedOver<AdaptiveFollows>('adaptiveFollows')
  : await section('adaptive following a cost that changes', () => runJsonChild<AdaptiveFollows>('bench/adaptive-follows.ts', []))

// 5. Ratios
const find = (all: Row[], endpoint: Endpoint, c: number) => {
  const found = all.find((r) => r.endpoint === endpoint.name && r.connections === c)
  if (!found) throw new Error(`no row for ${endpoint.name} at c=${c}`)
  return found
}
const rps = (endpoint: Endpoint, c = 64) => find(nodeRows, endpoint, c).requestsPerS
/** The server's CPU seconds per request: the server's cores over its requests per second. */
const serverTime = (endpoint: Endpoint, c = 64) => {
  const row = find(nodeRows, endpoint, c)
  return row.serverCores === null ? null : row.serverCores / row.requestsPerS
}
const jsonWebTime = serverTime(E.jsonWeb)
const jsonHelpersTime = serverTime(E.jsonHelpers)
const { pipelineLimit } = modelLimit
const eng = (name: string) => engine.find((e) => e.workload === 'closed-loop' && e.engine === name)!
const host = machine()
const workerd = workerdRatios(workerdDirectRows, workerdRows, isolateLimits, {
  ocrBeside: ocrIsolateLimitBeside,
  ocrAgainstNode: ocrIsolateAgainstNode,
  cores: host.nproc,
})
const workerdOcr = workerdRows.find((r) => r.endpoint === E.ocrBatched.name && r.connections === 64)
const threadRounds = (replicas: number) => threadRows.find((r) => r.replicas === replicas && r.ortThreads === '1')!.roundsRequestsPerS
/** A row over its baseline, measured round-robin with it in the same server at c=64: see roundByRound. */
const versus = (row: Endpoint, baseline: Endpoint) => roundByRound(find(nodeRows, row, 64).roundsRequestsPerS, find(nodeRows, baseline, 64).roundsRequestsPerS)

const ratios = {
  deployment_route_vs_hono_c64: versus(E.noop, E.hello),
  batched_deployment_route_vs_hono_c64: versus(E.noopBatched, E.hello),
  ocr_batched_vs_unbatched_c64: versus(E.ocrBatched, E.ocrUnbatched),
  ocr_served_vs_pipeline_limit_c64: rps(E.ocrBatched) / pipelineLimit.itemsPerS,
  mlp_batched_vs_hono_json_c64: versus(E.mlpBatched, E.honoJson),
  request_json_vs_read_json_server_time_c64: jsonWebTime === null || jsonHelpersTime === null ? null : jsonWebTime / jsonHelpersTime,
  node_threads_2_vs_1_c64: roundByRound(threadRounds(2), threadRounds(1)),
  engine_vs_dataloader: eng('edgeserve batch()').vsDataLoader,
  c1_added_p50_ms: find(nodeRows, E.mlpBatchedT0, 1).p50Ms - find(nodeRows, E.mlpUnbatched, 1).p50Ms,
  workerd_vs_node_c64: workerdOcr ? workerdOcr.requestsPerS / rps(E.ocrBatched) : null,
  ...adaptiveVsBestFixed(batchSizes),
  ...adaptiveStages?.ratios,
  ...adaptiveFollows?.ratios,
  ...openLoopRatios(),
  ...workerd.ratios,
  ...(native?.ratios ?? {
    ocr_native_vs_wasm_served_c64: null,
    ocr_native_served_vs_pipeline_limit_c64: null,
    ocr_recognizer_native_vs_wasm_c64: null,
    ocr_detector_native_vs_wasm_c64: null,
  }),
}
const ratioNotes = {
  deployment_route_vs_hono_c64: `a deployment whose fetch() returns a constant, over a bare Hono route, same server, c=64, the median of ${RATIO.count} interleaved rounds' ratios`,
  batched_deployment_route_vs_hono_c64: 'a deployment whose fetch() awaits a no-op batched method, over the same bare route',
  ocr_batched_vs_unbatched_c64:
    "the OCR direction example as shipped (instances: 'auto', one single-threaded instance per core) over the same class at maxBatchSize 1 (one run of one item per request)",
  ocr_served_vs_pipeline_limit_c64:
    'limit = best in-process items/s of decode + preprocess + run on the same image over batch sizes and layouts (ORT threads, instances), ' +
    'its best cell measured again after each round of the served rows ' +
    `(batch ${pipelineLimit.batch}, ${layoutName(pipelineLimit)}, ${pipelineLimit.itemsPerS.toFixed(0)} items/s)`,
  mlp_batched_vs_hono_json_c64: 'the house-price example as shipped over a bare Hono route that reads and checks the same JSON and answers the same shape',
  request_json_vs_read_json_server_time_c64:
    'server CPU time per request of a deployment that reads request.json() and returns Response.json(), over the same deployment with readJson() and a plain value (at most 1.10)',
  node_threads_2_vs_1_c64: 'the OCR example on 2 worker-thread replicas over 1, one ORT thread each (EDGESERVE_NUM_THREADS=1), c=64',
  engine_vs_dataloader:
    "256 callers each awaiting its next call; the median over rounds of DataLoader's time over batch()'s in the same round; the burst workload is in the tables",
  c1_added_p50_ms: 'house-price MLP with batchWaitTimeoutS 0: batched minus unbatched p50 at c=1 (the shipped 0.1 s wait holds a lone request by design)',
  workerd_vs_node_c64: 'batched OCR req/s at c=64, workerd (wrangler dev) over Node',
  adaptive_target_p99_vs_target_open_loop:
    `OCR direction classifier with adaptive: { latencyTargetMs: ${OCR_LATENCY_TARGET_MS} }, p99 over the target under Poisson arrivals at 60% of the best fixed size's c=64 req/s ` +
    '(bench/open-loop.ts: keep-alive HTTP on loopback, latency from each scheduled arrival), median of the rounds',
  adaptive_target_met_where_fixed_does_open_loop:
    'true when the adaptive row is within its target, or when no fixed size (1 to 32) is either, under the same open-loop load',
  ...Object.fromEntries(
    Object.keys(adaptiveVsBestFixed(batchSizes)).map((key) => [
      key,
      `req/s at c=64 of the example as shipped (adaptive) over its best fixed maxBatchSize (${FIXED_SIZES.join(', ')}), ` +
        `in one server, rows round-robin, ${ADAPTIVE_ROUNDS.count} rounds: each round against the size best by median in the other rounds, the median of those ratios` +
        (key.endsWith('workerd') ? '; on Workers adaptive allows maxBatchSize (32), as fixed 32: deployed, their clock stands still while code runs' : ''),
    ]),
  ),
  ...(adaptiveStages &&
    Object.fromEntries(Object.entries(adaptiveStages.ratioNotes).map(([key, note]) => [key, quick ? `${note} (carried over from the last full run)` : note]))),
  ...(adaptiveFollows &&
    Object.fromEntries(Object.entries(adaptiveFollows.ratioNotes).map(([key, note]) => [key, quick ? `${note} (carried over from the last full run)` : note]))),
  ...workerd.notes,
  ...native?.ratioNotes,
}

/**
 * `adaptive_target_p99_vs_target_open_loop`: the classifier with a latency target, its p99 under the
 * open-loop load over the target (at most 1 meets it); and whether it meets the target wherever a
 * fixed size does (true also when no fixed size does).
 */
function openLoopRatios(): Record<string, number | boolean> {
  const adaptive = openLoopRows.find((r) => r.setting === 'adaptive-target')
  if (adaptive === undefined) return {}
  const fixedMeets = openLoopRows.some((r) => r.setting !== 'adaptive-target' && r.p99Ms <= OCR_LATENCY_TARGET_MS)
  return {
    adaptive_target_p99_vs_target_open_loop: adaptive.p99Ms / OCR_LATENCY_TARGET_MS,
    adaptive_target_met_where_fixed_does_open_loop: !fixedMeets || adaptive.p99Ms <= OCR_LATENCY_TARGET_MS,
  }
}

// What puts served OCR short of its limit: the model itself running slower inside the server (its
// batches' items per second of execution, from /-/metrics.json, over its best in-process
// run in the same layout), or the server leaving it idle between batches.
const servedOcr = find(nodeRows, E.ocrBatched, 64)
// The example's layout: instances 'auto', one per core (a single session where there is one core).
const servedInstances = Math.max(...modelLimit.runLimits.map((l) => l.instances))
const runLimit = modelLimit.runLimits.find((l) => l.instances === servedInstances && (servedInstances > 1 || l.threads === 1))!
/**
 * Served requests over what the batches' speed allows: the mean number of batches in flight. Below 1,
 * the share of the time a batch was running; above 1, batches overlapped (the example runs one per
 * instance), each one's time includes its wait at an instance, and the model ran at least at the row's
 * own rate.
 */
const modelBusy = servedOcr.batchItemsPerS === null ? null : servedOcr.requestsPerS / servedOcr.batchItemsPerS
const modelItemsPerS = modelBusy === null ? null : modelBusy > 1 ? servedOcr.requestsPerS : servedOcr.batchItemsPerS!
const ocrServedBreakdown = {
  requestsPerS: servedOcr.requestsPerS,
  batchItemsPerS: servedOcr.batchItemsPerS,
  runLimit,
  /** The model's speed in the server over its best in-process `session.run`. */
  modelSpeedVsRunLimit: modelItemsPerS === null ? null : modelItemsPerS / runLimit.itemsPerS,
  modelBusy,
}

const results = {
  date: new Date().toISOString(),
  mode: quick ? 'quick' : 'full',
  settings: {
    durationS,
    warmupS,
    leadInS: LEAD_IN_S,
    ratioRepeats: RATIO.count,
    roundS: RATIO.rowS,
    adaptiveRounds: ADAPTIVE_ROUNDS,
    openLoopRounds: OPEN_LOOP_ROUNDS,
    concurrency: CONCURRENCY,
  },
  machine: host,
  engine,
  requestPath,
  requestPathCount,
  modelLimit,
  generation,
  node: nodeRows,
  nodeThreads: threadRows,
  workerd: workerdRows,
  workerdError,
  workerdDirect: workerdDirectRows,
  workerdDirectError,
  isolateLimits,
  ocrIsolateLimitBeside,
  ocrIsolateAgainstNode,
  workerdHop: workerd.hop,
  prepare,
  prepareErrors,
  ocrPipeline,
  ocrPipelineNative,
  native,
  nativeError,
  autoscaling,
  batchSizes,
  adaptiveStages,
  adaptiveFollows,
  sectionErrors,
  openLoop: { targetMs: OCR_LATENCY_TARGET_MS, ratePerS: openLoopRate, rows: openLoopRows },
  ratios,
  ratioNotes,
  ocrServedBreakdown,
  elapsedS: (Date.now() - started) / 1000,
}
mkdirSync(`${ROOT}/bench/results`, { recursive: true })
writeFileSync(`${ROOT}/bench/results/latest.json`, JSON.stringify(results, null, 2) + '\n')
const { markdown, svg } = renderReport(results, readFileSync(`${ROOT}/bench/template.md`, 'utf8'))
mkdirSync(`${ROOT}/docs/images`, { recursive: true })
writeFileSync(`${ROOT}/docs/images/benchmarks.svg`, svg)
writeFileSync(`${ROOT}/docs/benchmarks.md`, markdown)
log(`done in ${results.elapsedS.toFixed(0)} s: bench/results/latest.json, docs/benchmarks.md, docs/images/benchmarks.svg`)
console.log(JSON.stringify(ratios, null, 2))
