/**
 * `npm run bench` (`tsx bench/run.ts [--quick]`): every benchmark in one run.
 * Writes bench/results/latest.json, docs/images/benchmarks.svg and
 * docs/benchmarks.md (from bench/template.md). Each measured piece runs in a
 * process of its own: the engine, each model-limit config, each server; the
 * load generator (autocannon) runs here, apart from the servers.
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { cpus, totalmem } from 'node:os'
import { execSync } from 'node:child_process'
import { ROOT, TSX, quick, runJsonChild, startChild } from './lib.js'
import { loadRow, type LoadRow, type LoadSpec } from './http.js'
import { renderReport } from './report.js'

const started = Date.now()
const durationS = quick ? 1.5 : 10
const warmupS = quick ? 0.5 : 3
const CONCURRENCY = [1, 16, 64]
const log = (message: string) => console.error(`[bench ${((Date.now() - started) / 1000).toFixed(0)}s] ${message}`)

const png = readFileSync(`${ROOT}/test/fixtures/ocr/hello-world.png`)
const mlpBody = JSON.stringify({ features: [8.3, 41, 6.9, 1.0, 322, 2.5, 37.88, -122.23] })

interface Endpoint {
  name: string
  path: string
  body?: Buffer | string
  contentType?: string
  deployment?: string
}
const ENDPOINTS: Endpoint[] = [
  { name: 'http-ceiling', path: '/hello' },
  { name: 'ocr-unbatched', path: '/ocr-unbatched', body: png, contentType: 'image/png', deployment: 'OcrUnbatched' },
  { name: 'ocr-batched', path: '/ocr', body: png, contentType: 'image/png', deployment: 'TextDirectionClassifier' },
  { name: 'mlp-unbatched', path: '/predict-unbatched', body: mlpBody, contentType: 'application/json', deployment: 'MlpUnbatched' },
  { name: 'mlp-batched-timeout0.1', path: '/predict', body: mlpBody, contentType: 'application/json', deployment: 'HousePricePredictor' },
  { name: 'mlp-batched-timeout0', path: '/predict-t0', body: mlpBody, contentType: 'application/json', deployment: 'HousePriceT0' },
]

async function rowsAgainst(target: string, base: string, endpoints: Endpoint[], connections: number[]): Promise<(LoadRow & { endpoint: string })[]> {
  const rows = []
  for (const endpoint of endpoints) {
    // One request first, so model loading is not measured.
    const first = await fetch(base + endpoint.path, {
      method: endpoint.body === undefined ? 'GET' : 'POST',
      ...(endpoint.body === undefined ? {} : { body: (typeof endpoint.body === "string" ? endpoint.body : new Uint8Array(endpoint.body)) as BodyInit, headers: { 'content-type': endpoint.contentType! } }),
    })
    if (!first.ok) throw new Error(`${target} ${endpoint.path}: ${first.status} ${await first.text()}`)
    await first.arrayBuffer()
    for (const c of connections) {
      const spec: LoadSpec = { target, base, path: endpoint.path, connections: c, durationS, warmupS, body: endpoint.body, contentType: endpoint.contentType, deployment: endpoint.deployment }
      const row = await loadRow(spec)
      log(`${target} ${endpoint.name} c=${c}: ${row.requestsPerS.toFixed(0)} req/s, p50 ${row.p50Ms.toFixed(2)} ms, p99 ${row.p99Ms.toFixed(2)} ms, batch ${row.meanBatchSize?.toFixed(1) ?? '-'}`)
      rows.push({ ...row, endpoint: endpoint.name })
    }
  }
  return rows
}

async function nodeServer(args: string[], env: Record<string, string> = {}) {
  return startChild([process.execPath, TSX, 'bench/server.ts', ...args], /READY (http:\/\/\S+)/, env)
}

function machine() {
  const cpuModel = /model name\s*:\s*(.+)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? cpus()[0]?.model ?? 'unknown'
  let nproc = String(cpus().length)
  try {
    nproc = execSync('nproc').toString().trim()
  } catch {
    // keep os.cpus()
  }
  return { nproc: Number(nproc), cpuModel, memoryGiB: +(totalmem() / 2 ** 30).toFixed(1), node: process.version, platform: `${process.platform} ${process.arch}` }
}

// 1. Engine
log('engine')
const engine = await runJsonChild<{ workload: string; engine: string; itemsPerS: number; nsPerItem: number }[]>('bench/engine.ts', quick ? ['--quick'] : [])

// 2. Model limit
const modelLimit = []
for (const threads of quick ? ['1', 'default'] : ['1', 'default', '2']) {
  log(`model limit, numThreads ${threads}`)
  modelLimit.push(await runJsonChild<{ threads: string; effectiveNumThreads: number; rows: { batch: number; itemsPerS: number; msPerRun: number }[] }>('bench/model-limit.ts', [...(quick ? ['--quick'] : []), '--threads', threads]))
}

// 2b. Static against continuous batching for text generation
log('continuous batching')
const generation = await runJsonChild<{ mode: string; tokensPerS: number; ttftP50Ms: number; ttftP95Ms: number; meanLatencyMs: number; totalMs: number }[]>(
  'bench/continuous.ts',
  quick ? ['--quick'] : [],
)

// 3. Node over loopback HTTP
log('node server')
const node = await nodeServer([])
let nodeRows
try {
  nodeRows = await rowsAgainst('node', node.match[1]!, ENDPOINTS, CONCURRENCY)
} finally {
  await node.stop()
}

// Part B: OCR at c=64 with 1 and 2 replicas on worker threads.
const threadRows = []
for (const replicas of [1, 2]) {
  log(`node server, OCR on ${replicas} thread replica(s)`)
  const server = await nodeServer(['--threads'], { BENCH_OCR_REPLICAS: String(replicas) })
  try {
    const [row] = await rowsAgainst('node-threads', server.match[1]!, [ENDPOINTS.find((e) => e.name === 'ocr-batched')!], [64])
    threadRows.push({ ...row!, replicas })
  } finally {
    await server.stop()
  }
}

// 4. workerd through wrangler dev
log('wrangler dev')
let workerdRows: (LoadRow & { endpoint: string })[] = []
let workerdError: string | undefined
try {
  const wrangler = await startChild(
    [process.execPath, 'node_modules/wrangler/bin/wrangler.js', 'dev', '-c', 'bench/wrangler.toml', '--ip', '127.0.0.1', '--port', '0', '--inspector-port', '0'],
    /Ready on (http:\/\/[\d.]+:\d+)/,
    {},
    90_000,
  )
  try {
    workerdRows = await rowsAgainst('workerd', wrangler.match[1]!, ENDPOINTS, CONCURRENCY)
  } finally {
    await wrangler.stop()
  }
} catch (error) {
  workerdError = error instanceof Error ? error.message.slice(0, 2000) : String(error)
  log(`workerd failed: ${workerdError}`)
}

// 5. Ratios
const row = (rows: (LoadRow & { endpoint: string })[], endpoint: string, c: number) => rows.find((r) => r.endpoint === endpoint && r.connections === c)
const ocrB64 = row(nodeRows, 'ocr-batched', 64)!
const ocrU64 = row(nodeRows, 'ocr-unbatched', 64)!
const limit1 = modelLimit.find((m) => m.threads === '1')!
const bestLimit = limit1.rows.reduce((a, b) => (b.itemsPerS > a.itemsPerS ? b : a))
const engineWorkload = 'closed-loop'
const eng = (name: string) => engine.find((e) => e.workload === engineWorkload && e.engine === name)!
const workerdOcr = row(workerdRows, 'ocr-batched', 64)
const ratios = {
  ocr_batched_vs_unbatched_c64: ocrB64.requestsPerS / ocrU64.requestsPerS,
  ocr_batched_vs_limit_c64: ocrB64.requestsPerS / bestLimit.itemsPerS,
  mlp_batched_vs_http_ceiling_c64: row(nodeRows, 'mlp-batched-timeout0', 64)!.requestsPerS / row(nodeRows, 'http-ceiling', 64)!.requestsPerS,
  engine_vs_dataloader: eng('edgeserve batch()').itemsPerS / eng('DataLoader').itemsPerS,
  c1_added_p50_ms: row(nodeRows, 'mlp-batched-timeout0', 1)!.p50Ms - row(nodeRows, 'mlp-unbatched', 1)!.p50Ms,
  workerd_vs_node_c64: workerdOcr ? workerdOcr.requestsPerS / ocrB64.requestsPerS : null,
}
const ratioNotes = {
  ocr_batched_vs_limit_c64: `limit = best raw session.run items/s at numThreads 1 (batch ${bestLimit.batch}, ${bestLimit.itemsPerS.toFixed(0)} items/s); the server's ORT also runs with 1 thread (ORT's default on this ${cpus().length}-core machine)`,
  mlp_batched_vs_http_ceiling_c64: 'the timeoutS 0 twin of the house-price deployment (as configured, timeoutS 0.1, is in the tables)',
  engine_vs_dataloader: `workload "${engineWorkload}" (256 callers each awaiting its next call); the burst workload is in the tables`,
  c1_added_p50_ms:
    "house-price MLP (timeoutS 0): batched minus unbatched p50 at c=1 on Node; a model that costs microseconds shows the queue's own cost, where OCR p50s vary by about a millisecond between rows (its pair is in the tables)",
  workerd_vs_node_c64: 'batched OCR req/s at c=64, workerd (wrangler dev) over Node',
}

const results = {
  date: new Date().toISOString(),
  mode: quick ? 'quick' : 'full',
  settings: { durationS, warmupS, concurrency: CONCURRENCY },
  machine: machine(),
  engine,
  modelLimit,
  generation,
  node: nodeRows,
  nodeThreads: threadRows,
  workerd: workerdRows,
  workerdError,
  ratios,
  ratioNotes,
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
