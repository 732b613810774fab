/**
 * One HTTP load row: autocannon in this process (the server is another
 * process), with exact latencies taken from autocannon's per-response event
 * (its own histogram rounds to whole milliseconds), and the mean batch size
 * and how fast its batches ran from the server's /-/metrics.json delta; on
 * Workers, the calls into the deployment's objects from its /-/metrics.
 */
import autocannon from 'autocannon'
import { groupCpuS, ownCpuS } from './cpu.js'
import { nearestMedian, percentile } from './lib.js'
import { addObjectCalls, objectCallTotals, objectCallsBetween, type ObjectCalls } from './object-calls.js'

export interface LoadRow {
  target: string
  path: string
  connections: number
  requestsPerS: number
  p50Ms: number
  p99Ms: number
  errors: number
  non2xx: number
  meanBatchSize: number | null
  /**
   * Items per second of batch execution (items over the batched method's
   * time): for a model, how fast it ran inside the served process, to set
   * beside its in-process limit. Null without a deployment to read.
   */
  batchItemsPerS: number | null
  /** Cores the load generator (autocannon, this process) used during the row: 1.0 is one whole core. */
  loadGeneratorCores: number
  /** Cores the server's process group used during the row (null where /proc is missing). */
  serverCores: number | null
  /** Repeats this row is the median of (by req/s). */
  repeats: number
  /** Each repeat's req/s, in the order of the rounds: rows measured round-robin can be compared round by round. */
  roundsRequestsPerS: number[]
  /** Each repeat's p50, in the same order: a latency compared round by round. Absent from results stored before it was kept. */
  roundsP50Ms?: number[]
  /** With `probe`: latency of the probe's GETs during the row (null without one). */
  probeP50Ms: number | null
  probeP99Ms: number | null
  probes: number | null
  /**
   * With `objectCalls`: the calls into the deployment's Durable Objects during the runs, every
   * round's together, and the items they carried; null where /-/metrics does not count them.
   */
  objectCalls?: ObjectCalls | null
}

interface Family {
  name: string
  samples: { labels: Record<string, string>; sum?: number; count?: number }[]
}

interface BatchTotals {
  /** Items in the deployment's batches so far. */
  items: number
  batches: number
  /** Seconds its batched methods ran. */
  executionS: number
}

/** A deployment's batch totals (all replicas, all methods) from edgeserve_batch_size and edgeserve_batch_execution_seconds. */
async function batchTotals(base: string, deployment: string | undefined): Promise<BatchTotals | null> {
  if (!deployment) return null
  const response = await fetch(`${base}/-/metrics.json`)
  if (!response.ok) return null
  const { metrics } = (await response.json()) as { metrics: Family[] }
  const samples = (name: string) => (metrics.find((m) => m.name === name)?.samples ?? []).filter((sample) => sample.labels.deployment === deployment)
  const totals = { items: 0, batches: 0, executionS: 0 }
  for (const sample of samples('edgeserve_batch_size')) {
    totals.items += sample.sum ?? 0
    totals.batches += sample.count ?? 0
  }
  for (const sample of samples('edgeserve_batch_execution_seconds')) totals.executionS += sample.sum ?? 0
  return totals
}

export interface LoadSpec {
  target: string
  base: string
  path: string
  connections: number
  durationS: number
  warmupS: number
  body?: Buffer | string
  contentType?: string
  /** Deployment whose batch sizes to read from /-/metrics.json. */
  deployment?: string
  /** The server's process group, for its CPU use. */
  serverGroup?: number
  /**
   * A path to GET during the row, one request at a time every
   * PROBE_INTERVAL_MS: how long the server's thread keeps a cheap request
   * waiting while it serves this load (a model run on that thread holds it).
   */
  probe?: string
  /** Read the calls into `deployment`'s Durable Objects, and the items they carried, from /-/metrics around each run (Workers). */
  objectCalls?: boolean
}

export const PROBE_INTERVAL_MS = 20

/** `deployment`'s object calls so far, from the Prometheus text; null without them. */
async function objectCallsNow(base: string, deployment: string | undefined): Promise<ObjectCalls | null> {
  if (!deployment) return null
  const response = await fetch(`${base}/-/metrics`)
  const text = await response.text()
  return response.ok ? objectCallTotals(text, deployment) : null
}

/** GET `url` one at a time, every PROBE_INTERVAL_MS, until `stop()`; the latencies it saw. */
function startProbe(url: string): { stop: () => Promise<number[]> } {
  const latencies: number[] = []
  let stopped = false
  const loop = (async () => {
    while (!stopped) {
      const t0 = performance.now()
      const response = await fetch(url)
      await response.arrayBuffer()
      if (!response.ok) throw new Error(`probe ${url}: ${response.status}`)
      const ms = performance.now() - t0
      latencies.push(ms)
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, PROBE_INTERVAL_MS - ms)))
    }
  })()
  // A failed probe fails the row, at stop(): not before, as an unhandled rejection that ends the run mid-row.
  loop.catch(() => undefined)
  return {
    stop: async () => {
      stopped = true
      await loop
      return latencies
    },
  }
}

/**
 * Seconds a measured run goes on before its answers count. Each run starts
 * with new connections and an empty queue, so a row whose batches take a
 * few hundred milliseconds answers nothing at first: OCR at c=64 on workerd
 * answered its first requests 0.3-0.4 s in, and counted from the start a 2 s
 * run read 10-15% under the rate the same row held from then on. Half a
 * second covers that; cheap rows read the same either way.
 */
export const LEAD_IN_S = 0.5
/** Seconds a run goes on after its window, so that autocannon stops after the window has closed. */
const TAIL_S = 0.25

function cannon(spec: LoadSpec, durationS: number, onResponse?: (status: number, ms: number) => void) {
  return new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: spec.base + spec.path,
        connections: spec.connections,
        duration: durationS,
        method: spec.body === undefined ? 'GET' : 'POST',
        ...(spec.body === undefined ? {} : { body: spec.body, headers: { 'content-type': spec.contentType ?? 'application/octet-stream' } }),
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    )
    if (onResponse) instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => onResponse(status, ms))
  })
}

/**
 * One measured run of a row (after its warm-up): the answers that arrive in
 * a window of `durationS`, which opens LEAD_IN_S after the run starts.
 */
export async function measure(spec: LoadSpec): Promise<LoadRow> {
  const before = await batchTotals(spec.base, spec.deployment)
  const callsBefore = spec.objectCalls ? await objectCallsNow(spec.base, spec.deployment) : null
  const latencies: number[] = []
  const cpu0 = ownCpuS()
  const server0 = spec.serverGroup === undefined ? null : groupCpuS(spec.serverGroup)
  const t0 = performance.now()
  const probe = spec.probe === undefined ? undefined : startProbe(spec.base + spec.probe)
  const opens = t0 + LEAD_IN_S * 1000
  const closes = opens + spec.durationS * 1000
  let answers = 0
  const result = await cannon(spec, LEAD_IN_S + spec.durationS + TAIL_S, (status, ms) => {
    if (!inWindow(performance.now(), opens, closes)) return
    answers++
    if (status >= 200 && status < 300) latencies.push(ms)
  })
  const probeLatencies = await probe?.stop()
  const wallS = (performance.now() - t0) / 1000
  const server1 = spec.serverGroup === undefined ? null : groupCpuS(spec.serverGroup)
  const loadGeneratorCores = (ownCpuS() - cpu0) / wallS
  const after = await batchTotals(spec.base, spec.deployment)
  const callsAfter = spec.objectCalls ? await objectCallsNow(spec.base, spec.deployment) : null
  const batches = before && after ? after.batches - before.batches : 0
  const executionS = before && after ? after.executionS - before.executionS : 0
  const requestsPerS = answers / spec.durationS
  const p50Ms = percentile(latencies, 50)
  return {
    target: spec.target,
    path: spec.path,
    connections: spec.connections,
    requestsPerS,
    p50Ms,
    p99Ms: percentile(latencies, 99),
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    meanBatchSize: before && after && batches > 0 ? (after.items - before.items) / batches : null,
    batchItemsPerS: before && after && executionS > 0 ? (after.items - before.items) / executionS : null,
    loadGeneratorCores,
    serverCores: server0 === null || server1 === null ? null : (server1 - server0) / wallS,
    repeats: 1,
    roundsRequestsPerS: [requestsPerS],
    roundsP50Ms: [p50Ms],
    probeP50Ms: probeLatencies ? percentile(probeLatencies, 50) : null,
    probeP99Ms: probeLatencies ? percentile(probeLatencies, 99) : null,
    probes: probeLatencies ? probeLatencies.length : null,
    ...(spec.objectCalls ? { objectCalls: objectCallsBetween(callsBefore, callsAfter) } : {}),
  }
}

/** Whether an answer that arrived `at` counts in a window open from `opens` until before `closes` (performance.now() times). */
export const inWindow = (at: number, opens: number, closes: number): boolean => at >= opens && at < closes

/** Warm the endpoint up (JIT, model load, connection pools) without measuring. */
export async function warmUp(spec: LoadSpec): Promise<void> {
  if (spec.warmupS > 0) await cannon(spec, spec.warmupS)
}

/** The run whose req/s is the median of `runs`, marked with how many runs it stands for, with each run's req/s and p50; object calls are every run's together. */
export function medianRun(runs: LoadRow[]): LoadRow {
  const chosen = nearestMedian(runs, (r) => r.requestsPerS)
  return {
    ...chosen,
    repeats: runs.length,
    roundsRequestsPerS: runs.map((r) => r.requestsPerS),
    roundsP50Ms: runs.map((r) => r.p50Ms),
    ...('objectCalls' in chosen ? { objectCalls: addObjectCalls(runs.map((r) => r.objectCalls ?? null)) } : {}),
  }
}

/**
 * Rows measured round-robin, `repeats` rounds, each the median run: rows that
 * are compared in a ratio see the same drift (other load, GC, thermal) alike.
 * Each round starts one row further on, so that no row always runs right
 * after the same other one (in what that one left behind: its garbage, a
 * collection under way, a model's caches).
 */
export async function interleavedRows(specs: LoadSpec[], repeats: number, afterRound?: () => Promise<unknown>): Promise<LoadRow[]> {
  for (const spec of specs) await warmUp(spec)
  const runs = specs.map((): LoadRow[] => [])
  for (let round = 0; round < repeats; round++) {
    for (let k = 0; k < specs.length; k++) {
      const i = (round + k) % specs.length
      runs[i]!.push(await measure(specs[i]!))
    }
    await afterRound?.()
  }
  return runs.map(medianRun)
}
