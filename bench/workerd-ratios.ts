/**
 * The workerd ratios (a route, each model against its baselines, the items
 * each call into an object carried and what gathering them gives, at c=64
 * and in a lone request's p50) and the hop's breakdown, from the rows
 * measured against workerd directly and through wrangler dev, and each
 * model's limit in one isolate. A row, limit or metric not measured gives null.
 */
import { ENDPOINTS as E, type Endpoint } from './endpoints.js'
import type { IsolateAgainstNode, IsolateLimitRow } from './isolate-limit.js'
import type { LoadRow } from './http.js'
import { differenceRoundByRound, median, roundByRound } from './lib.js'
import { itemsPerCall } from './object-calls.js'

type Row = LoadRow & { endpoint: string }

/** Microseconds of one request at c=64 on each route, and the differences that make the hop (null where not measured). */
export interface HopBreakdown {
  way: 'direct' | 'wrangler dev'
  /** 1e6 / req/s: what one request costs the server when its thread is saturated. */
  helloUs: number | null
  rawHopUs: number | null
  rawRpcUs: number | null
  noopUs: number | null
  noopBatchedUs: number | null
  /** workerd's own stub.fetch into an object that answers at once. */
  workerdHopUs: number | null
  /** The same hop as a Workers RPC call returning a string. */
  workerdRpcHopUs: number | null
  /** edgeserve's part of a no-op deployment route: ingress, router, replica, and the object's side. */
  oursUs: number | null
  /** The batch queue on top of that. */
  batchUs: number | null
  /** The house-price POST: a Worker route reading its JSON, that POST forwarded to an object with nothing of ours, and the MLP as shipped. */
  jsonUs: number | null
  rawHopJsonUs: number | null
  mlpUs: number | null
  /** workerd's hop for that POST, and what the MLP's deployment (ours and the model) adds to it. */
  workerdJsonHopUs: number | null
  mlpOverRawUs: number | null
  /** The model run in the Worker for each request: no object, no hop, no batching. */
  mlpInWorkerUs: number | null
}

/** `endpoint`'s row at `c` connections (64 unless told), or undefined where it was not measured. */
const rowOf = (rows: Row[], endpoint: Endpoint, c = 64): Row | undefined => rows.find((r) => r.endpoint === endpoint.name && r.connections === c)
/** req/s of `endpoint`'s row at c=64, or null where it was not measured. */
const rpsOf = (rows: Row[], endpoint: Endpoint): number | null => rowOf(rows, endpoint)?.requestsPerS ?? null
const us = (rows: Row[], endpoint: Endpoint): number | null => {
  const rps = rpsOf(rows, endpoint)
  return rps !== null && rps > 0 ? 1e6 / rps : null
}
/** `endpoint`'s row over `baseline`'s, measured round-robin with it at c=64 (see roundByRound); null where either was not measured. */
const versusOf = (rows: Row[], endpoint: Endpoint, baseline: Endpoint): number | null => {
  const row = rowOf(rows, endpoint)
  const base = rowOf(rows, baseline)
  return row && base ? roundByRound(row.roundsRequestsPerS, base.roundsRequestsPerS) : null
}
/**
 * What `endpoint`'s p50 adds to `baseline`'s, both at c=1 and measured round-robin, round by round (see
 * differenceRoundByRound); null where either was not measured, or was stored without each round's p50.
 */
const addedP50AtC1 = (rows: Row[], endpoint: Endpoint, baseline: Endpoint): number | null => {
  const row = rowOf(rows, endpoint, 1)?.roundsP50Ms
  const base = rowOf(rows, baseline, 1)?.roundsP50Ms
  return row && base ? differenceRoundByRound(row, base) : null
}
const diff = (a: number | null, b: number | null) => (a === null || b === null ? null : a - b)
const over = (a: number | null, b: number | null) => (a === null || b === null || a === 0 ? null : b / a)

function hop(way: HopBreakdown['way'], rows: Row[]): HopBreakdown {
  const helloUs = us(rows, E.hello)
  const rawHopUs = us(rows, E.rawHop)
  const rawRpcUs = us(rows, E.rawRpc)
  const noopUs = us(rows, E.noop)
  const noopBatchedUs = us(rows, E.noopBatched)
  const jsonUs = us(rows, E.honoJson)
  const rawHopJsonUs = us(rows, E.rawHopJson)
  const mlpUs = us(rows, E.mlpBatched)
  return {
    way,
    helloUs,
    rawHopUs,
    rawRpcUs,
    noopUs,
    noopBatchedUs,
    workerdHopUs: diff(rawHopUs, helloUs),
    workerdRpcHopUs: diff(rawRpcUs, helloUs),
    oursUs: diff(noopUs, rawHopUs),
    batchUs: diff(noopBatchedUs, noopUs),
    jsonUs,
    rawHopJsonUs,
    mlpUs,
    workerdJsonHopUs: diff(rawHopJsonUs, jsonUs),
    mlpOverRawUs: diff(mlpUs, rawHopJsonUs),
    mlpInWorkerUs: us(rows, E.mlpInWorker),
  }
}

const MODELS = [
  { key: 'ocr', batched: E.ocrBatched, unbatched: E.ocrUnbatched, what: 'OCR direction classifier (decode + preprocess + run)' },
  { key: 'mlp', batched: E.mlpBatched, unbatched: E.mlpUnbatched, what: 'house-price MLP' },
] as const

/** A ratio's target: at least `atLeast` (of `unit`, or times its baseline without one), or at most `atMost` of `unit`. */
export type Target = { atLeast: number; unit?: string | undefined } | { atMost: number; unit: string }

/** A workerd ratio the report lists, measured or not. */
export interface WorkerdRatio {
  key: string
  /** Its target; none for a ratio that is watched, not held to a bound. */
  target?: Target
  /** What it compares, for a report of results that have no note for it (measured before it was). */
  what: string
}

/** The workerd ratios the report lists whether measured or not, in its order: those with a target, then the watched ones; workerd directly. */
export const WORKERD_RATIOS: readonly WorkerdRatio[] = [
  {
    key: 'workerd_mlp_served_vs_json_route_c64',
    target: { atLeast: 0.8 },
    what: 'house-price MLP as shipped over a Worker route that reads the same JSON and answers the same shape, with no object and no model',
  },
  {
    key: 'workerd_mlp_batched_vs_in_worker_c64',
    target: { atLeast: 1 },
    what: 'house-price MLP as shipped (batched in a Durable Object) over the same model run in the Worker for each request (no object, no hop, no batching)',
  },
  {
    key: 'workerd_deployment_route_vs_hono_c64',
    target: { atLeast: 0.75 },
    what: 'a no-op deployment (one hop into a Durable Object) over the bare Hono route',
  },
  {
    key: 'workerd_items_per_object_call_c64',
    target: { atLeast: 8, unit: 'items' },
    what: "requests and handle calls carried by each call into the house-price MLP's Durable Objects during its batched row, from /-/metrics",
  },
  {
    key: 'workerd_ocr_batched_vs_in_worker_c64',
    target: { atLeast: 1 },
    what: 'OCR direction classifier as shipped (batched in a Durable Object) over the same decode, resize and run in the Worker for each request (no object, no hop, no batching)',
  },
  {
    key: 'workerd_ocr_served_vs_ceiling_c64',
    target: { atLeast: 0.8 },
    what: "batched OCR req/s over the lesser of the model's best decode + preprocess + run items/s in one isolate and the bare route's req/s",
  },
  {
    key: 'workerd_mlp_added_p50_ms_c1',
    target: { atMost: 0.3, unit: 'ms' },
    what:
      'p50 of the house-price MLP with no batch wait (a Worker gathers its concurrent calls to an object into one) minus that of its twin with ' +
      '`coalesceCalls: false` (one object call per request), both at c=1 (closed loop, one connection)',
  },
  {
    key: 'workerd_mlp_coalesced_vs_single_calls_c64',
    what:
      "house-price MLP as shipped over its twin with `coalesceCalls: false`: what gathering a Worker's calls into one object call gives, " +
      'against a call per request',
  },
]

const whatOf = (key: string) => WORKERD_RATIOS.find((t) => t.key === key)!.what

/** What was measured besides the served rows, each optional. */
export interface WorkerdMeasured {
  /**
   * OCR's best cell in one isolate, measured again after each round of its served rows
   * against workerd directly; its median is then the model's limit in that way's ceiling.
   */
  ocrBeside?: { batch: number; windows: number[] } | undefined
  /** That cell's windows in the isolate and in Node on one thread, taken in turn. */
  ocrAgainstNode?: IsolateAgainstNode | undefined
  /** The machine's cores, which the load generator shares with the server: the notes say so. */
  cores?: number | undefined
}

export function workerdRatios(direct: Row[], wranglerDev: Row[], limits: IsolateLimitRow[], measured: WorkerdMeasured = {}) {
  const { ocrBeside, ocrAgainstNode, cores } = measured
  const ratios: Record<string, number | null> = {}
  const notes: Record<string, string> = {}
  for (const [suffix, rows, way, server] of [
    ['', direct, 'against workerd directly (its own socket, no Miniflare or wrangler dev)', 'workerd'],
    ['_wrangler_dev', wranglerDev, 'through wrangler dev', 'wrangler dev and workerd'],
  ] as const) {
    if (rows.length === 0 || !rows.some((r) => r.endpoint === E.noop.name)) continue
    const shared = `the load generator (autocannon) shares ${cores === undefined ? "the machine's cores" : `the ${cores} cores`} with ${server}`
    const servedRows = `${way}, c=64, round by round; ${shared}`
    const set = (key: string, value: number | null, note: string) => {
      ratios[`${key}${suffix}`] = value
      notes[`${key}${suffix}`] = note
    }
    const rps = (endpoint: Endpoint) => rpsOf(rows, endpoint)
    const hello = rps(E.hello)
    set('workerd_deployment_route_vs_hono_c64', versusOf(rows, E.noop, E.hello), `${whatOf('workerd_deployment_route_vs_hono_c64')}, ${servedRows}`)
    for (const m of MODELS) {
      set(`workerd_${m.key}_batched_vs_unbatched_c64`, versusOf(rows, m.batched, m.unbatched), `${m.what} as shipped over its unbatched twin, ${servedRows}`)
    }
    // OCR served against its ceiling: the lesser of its limit in one isolate and the bare route.
    const own = limits.filter((l) => l.model === 'ocr' && l.mode === 'pipeline')
    const beside = suffix === '' && ocrBeside && ocrBeside.windows.length > 0 ? ocrBeside : undefined
    const limit = beside ? median(beside.windows) : own.length === 0 ? null : Math.max(...own.map((l) => l.itemsPerS))
    const ceiling = limit === null || hello === null ? null : Math.min(limit, hello)
    set(
      'workerd_ocr_served_vs_ceiling_c64',
      over(ceiling, rps(E.ocrBatched)),
      `batched req/s ${way} over the lesser of the model's best decode + preprocess + run items/s in one isolate ` +
        `(${limit === null ? '–' : limit.toFixed(0)}, ` +
        (beside
          ? `batch ${beside.batch}, the best of batches ${own.map((l) => l.batch).join(', ')}, measured again after each round of the served rows`
          : `batches of ${own.map((l) => l.batch).join(', ')}`) +
        `) and the bare route's req/s (${hello === null ? '–' : hello.toFixed(0)}); ${shared}`,
    )
    set('workerd_mlp_served_vs_json_route_c64', versusOf(rows, E.mlpBatched, E.honoJson), `${whatOf('workerd_mlp_served_vs_json_route_c64')}, ${servedRows}`)
    set('workerd_mlp_batched_vs_in_worker_c64', versusOf(rows, E.mlpBatched, E.mlpInWorker), `${whatOf('workerd_mlp_batched_vs_in_worker_c64')}, ${servedRows}`)
    set('workerd_ocr_batched_vs_in_worker_c64', versusOf(rows, E.ocrBatched, E.ocrInWorker), `${whatOf('workerd_ocr_batched_vs_in_worker_c64')}, ${servedRows}`)
    set(
      'workerd_mlp_coalesced_vs_single_calls_c64',
      versusOf(rows, E.mlpBatched, E.mlpSingleCalls),
      `${whatOf('workerd_mlp_coalesced_vs_single_calls_c64')}, ${servedRows}`,
    )
    const c1Rounds = rowOf(rows, E.mlpBatchedT0, 1)?.repeats
    set(
      'workerd_mlp_added_p50_ms_c1',
      addedP50AtC1(rows, E.mlpBatchedT0, E.mlpT0SingleCalls),
      `${whatOf('workerd_mlp_added_p50_ms_c1')}, ${way}, the median of ${c1Rounds ?? 'the'} interleaved rounds' differences; ${shared}`,
    )
    set(
      'workerd_items_per_object_call_c64',
      itemsPerCall(rowOf(rows, E.mlpBatched)?.objectCalls),
      `${whatOf('workerd_items_per_object_call_c64')} (the sum of edgeserve_object_call_items over its count, summed over the replicas, ` +
        `read before and after each run, every round together), ${way}, c=64; ${shared}. Not measured where /-/metrics has no such histogram`,
    )
  }
  if (ocrAgainstNode && ocrAgainstNode.isolate.length > 0) {
    ratios.workerd_ocr_isolate_vs_node_one_thread = roundByRound(ocrAgainstNode.isolate, ocrAgainstNode.node)
    notes.workerd_ocr_isolate_vs_node_one_thread =
      `OCR direction decode + preprocess + run at batch ${ocrAgainstNode.batch}, items/s in one workerd isolate over the same in a Node process on one ORT thread, ` +
      `one window each in turn (${median(ocrAgainstNode.isolate).toFixed(0)} against ${median(ocrAgainstNode.node).toFixed(0)}), the median of the rounds' ratios: the model's own speed, no HTTP and no hop`
  }
  return { ratios, notes, hop: [hop('direct', direct), hop('wrangler dev', wranglerDev)].filter((h) => h.helloUs !== null) }
}
