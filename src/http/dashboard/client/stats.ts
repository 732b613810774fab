/**
 * Turns two consecutive `/-/metrics.json` snapshots (and `/-/routes`) into
 * the numbers the dashboard shows. Pure: no DOM here. The browser test
 * checks these numbers against the server's own JSON.
 */
import type { Labels, MetricFamily } from '../../../metrics/registry.js'
import type { AdaptiveBody, MetricsBody, Options, RoutesBody } from './wire.js'

/** Cumulative bucket counts for each upper bound, as in the Prometheus exposition. */
export interface Histogram {
  bounds: number[]
  counts: number[]
  sum: number
  count: number
}

/** Which observations a number covers: the last poll interval, or everything since start. */
export type Window = 'interval' | 'cumulative'

export interface LatencyModel {
  window: Window
  p50: number | null
  p95: number | null
  p99: number | null
}

export interface MethodModel {
  name: string
  options: Options
  sizes: Histogram | null
  meanSize: { value: number; window: Window } | null
  /** Mean share of maxBatchSize that batches filled. */
  fill: number | null
  batchesRate: number | null
  batchesTotal: number | null
  queueLength: number | null
  inFlight: number | null
  /** With `adaptive`: what one replica measured; null without it. */
  adaptive: AdaptiveModel | null
}

export interface AdaptiveModel {
  replica: number
  /** The batch size the queue allows now. */
  limit: number
  /** Items per second a batch of each size measured lately serves (one batch at a time), ascending by size. */
  curve: { size: number; ms: number; itemsPerS: number }[]
}

/** A method's adaptive readings from /-/routes, checked, since the page takes nothing on trust that it draws. */
function adaptiveModel(body: AdaptiveBody | null | undefined, method: string): AdaptiveModel | null {
  const measured = body?.methods?.[method]
  if (!measured || !Number.isFinite(measured.batchSizeLimit)) return null
  const curve = (Array.isArray(measured.costCurve) ? measured.costCurve : [])
    .filter((point) => Number.isFinite(point?.size) && point.ms > 0)
    .map((point) => ({ size: point.size, ms: point.ms, itemsPerS: (point.size / point.ms) * 1000 }))
  return { replica: Number(body.replica), limit: measured.batchSizeLimit, curve }
}

export interface DeploymentModel {
  name: string
  routes: { method: string; path: string }[]
  options: Options
  /** Replicas taking requests now; null when the server does not say. */
  replicas: number | null
  requestsRate: number | null
  requestsTotal: number | null
  failedShare: number | null
  batchesRate: number | null
  latency: LatencyModel | null
  methods: MethodModel[]
  /**
   * Calls per second into the replicas' Durable Objects (Workers). Null on
   * the first poll, and where no object call was ever counted: on Node no
   * replica is reached by one.
   */
  objectCallsRate: number | null
  /**
   * Requests and handle calls each object call carried, on average: a Worker
   * isolate gathers its concurrent calls to a replica into one, and that
   * only pays when calls carry many. Null where no object call was counted.
   */
  itemsPerObjectCall: { value: number; window: Window } | null
}

export interface Model {
  time: number
  /** Seconds between the two snapshots; 0 on the first poll. */
  seconds: number
  deployments: DeploymentModel[]
}

type KeepLabels = (labels: Labels) => boolean

function familyOf(snapshot: MetricsBody | null, name: string): MetricFamily | undefined {
  const list = snapshot && Array.isArray(snapshot.metrics) ? snapshot.metrics : []
  return list.find((family) => family?.name === name)
}

function labelsMatch(labels: Labels | undefined, match: Labels): boolean {
  for (const key in match) if (!labels || labels[key] !== match[key]) return false
  return true
}

/** Sum of the counter or gauge samples whose labels match; null when there are none yet. */
function sumValues(snapshot: MetricsBody | null, name: string, match: Labels, keep?: KeepLabels): number | null {
  const family = familyOf(snapshot, name)
  if (!family || family.type === 'histogram' || !Array.isArray(family.samples)) return null
  let total: number | null = null
  for (const sample of family.samples) {
    if (labelsMatch(sample.labels, match) && (!keep || keep(sample.labels))) total = (total ?? 0) + Number(sample.value)
  }
  return total
}

/**
 * The matching samples of a histogram added up. Replicas (and origins) share
 * one family's bucket bounds, so their cumulative counts add element-wise,
 * as sum by (le) does in PromQL.
 */
function sumHistogram(snapshot: MetricsBody | null, name: string, match: Labels): Histogram | null {
  const family = familyOf(snapshot, name)
  if (!family || family.type !== 'histogram' || !Array.isArray(family.samples)) return null
  let total: Histogram | null = null
  for (const sample of family.samples) {
    if (!labelsMatch(sample.labels, match)) continue
    total ??= { bounds: family.buckets, counts: family.buckets.map(() => 0), sum: 0, count: 0 }
    const counts = total.counts
    sample.counts.forEach((count, i) => {
      counts[i] = (counts[i] ?? 0) + count
    })
    total.sum += sample.sum
    total.count += sample.count
  }
  return total
}

/** Distinct values of one label among a family's samples that match. */
function labelValues(snapshot: MetricsBody | null, name: string, label: string, match: Labels): Set<string> {
  const family = familyOf(snapshot, name)
  const found = new Set<string>()
  if (family && Array.isArray(family.samples)) {
    for (const sample of family.samples) {
      const value = sample.labels?.[label]
      if (labelsMatch(sample.labels, match) && typeof value === 'string') found.add(value)
    }
  }
  return found
}

/**
 * What a histogram gained since the previous poll. A histogram absent from
 * the previous snapshot had no observations then; a shrinking one means the
 * server restarted, and then nothing short of the cumulative data is honest.
 */
function histogramDelta(current: Histogram | null, previous: Histogram | null, hadPrevious: boolean): Histogram | null {
  if (!current || !hadPrevious) return null
  if (!previous) return current
  if (previous.counts.length !== current.counts.length) return null
  const counts = current.counts.map((count, i) => count - previous.counts[i]!)
  const count = current.count - previous.count
  if (count < 0 || counts.some((c) => c < 0)) return null
  return { bounds: current.bounds, counts, sum: current.sum - previous.sum, count }
}

/** The last interval when it saw observations, else everything since start: a number is better than a blank. */
function recentOrAll(current: Histogram | null, previous: Histogram | null, hadPrevious: boolean): { histogram: Histogram; window: Window } | null {
  const delta = histogramDelta(current, previous, hadPrevious)
  if (delta && delta.count > 0) return { histogram: delta, window: 'interval' }
  if (current && current.count > 0) return { histogram: current, window: 'cumulative' }
  return null
}

/**
 * Prometheus' histogram_quantile: find the bucket holding rank q * count and
 * interpolate linearly inside it. Observations beyond the last bound (the
 * +Inf bucket, which is count itself) report the last finite bound.
 */
export function quantile(q: number, histogram: Histogram | null): number | null {
  if (!histogram || !(histogram.count > 0)) return null
  const { bounds, counts, count } = histogram
  const rank = q * count
  let i = 0
  while (i < bounds.length && counts[i]! < rank) i++
  if (i === bounds.length) return bounds[bounds.length - 1] ?? null
  const upper = bounds[i]!
  if (i === 0 && upper <= 0) return upper
  const lower = i === 0 ? 0 : bounds[i - 1]!
  const below = i === 0 ? 0 : counts[i - 1]!
  const inBucket = counts[i]! - below
  return inBucket > 0 ? lower + (upper - lower) * ((rank - below) / inBucket) : upper
}

/**
 * Per-second rate of a counter between polls; a drop means a restart, so
 * count from zero. `previous` is undefined when there was no previous poll,
 * null when the counter had no samples then.
 */
function rate(current: number, previous: number | null | undefined, seconds: number): number | null {
  if (previous === undefined || !(seconds > 0)) return null
  const delta = current - (previous ?? 0)
  return (delta >= 0 ? delta : current) / seconds
}

/** A counter's per-second rate for a label selection. */
function counterRate(now: MetricsBody, before: MetricsBody | null, seconds: number, name: string, match: Labels, keep?: KeepLabels): number | null {
  return rate(sumValues(now, name, match, keep) ?? 0, before ? sumValues(before, name, match, keep) : undefined, seconds)
}

/**
 * Everything the page shows, computed from the latest snapshot, the one
 * before it (or none) and /-/routes (or none).
 */
export function buildModel(now: MetricsBody, before: MetricsBody | null, routes: RoutesBody | null): Model {
  const seconds = before ? (now.time - before.time) / 1000 : 0
  const described = routes && Array.isArray(routes.deployments) ? routes.deployments : []
  const names = described.map((d) => String(d.name))
  for (const name of labelValues(now, 'edgeserve_requests_total', 'deployment', {})) if (!names.includes(name)) names.push(name)
  for (const name of labelValues(now, 'edgeserve_batch_size', 'deployment', {})) if (!names.includes(name)) names.push(name)
  const routed = routes && Array.isArray(routes.routes) ? routes.routes : []
  return { time: now.time, seconds, deployments: names.map((name) => deploymentModel(name)) }

  function deploymentModel(name: string): DeploymentModel {
    const info = described.find((d) => String(d.name) === name)
    const match = { deployment: name }
    const latency = recentOrAll(
      sumHistogram(now, 'edgeserve_request_duration_seconds', match),
      before && sumHistogram(before, 'edgeserve_request_duration_seconds', match),
      before !== null,
    )
    const failed = (labels: Labels) => Number(labels.status) >= 400
    const requestsRate = counterRate(now, before, seconds, 'edgeserve_requests_total', match)
    const failedRate = counterRate(now, before, seconds, 'edgeserve_requests_total', match, failed)
    const requestsTotal = sumValues(now, 'edgeserve_requests_total', match)
    const failedTotal = sumValues(now, 'edgeserve_requests_total', match, failed)
    const objectCallsTotal = sumValues(now, 'edgeserve_object_calls_total', match)
    const carried = recentOrAll(
      sumHistogram(now, 'edgeserve_object_call_items', match),
      before && sumHistogram(before, 'edgeserve_object_call_items', match),
      before !== null,
    )

    const methodNames = Object.keys(info?.batchedMethods ?? {})
    for (const method of labelValues(now, 'edgeserve_batch_size', 'method', match)) if (!methodNames.includes(method)) methodNames.push(method)
    methodNames.sort()

    return {
      name,
      routes: routed.filter((r) => r.deployment === name).map((r) => ({ method: String(r.method), path: String(r.path) })),
      options: info?.options ?? {},
      // The deployment's own gauge (replicas taking requests; autoscaling moves it), else the replicas that reported.
      replicas: sumValues(now, 'edgeserve_replicas', match) ?? (labelValues(now, 'edgeserve_requests_total', 'replica', match).size || null),
      requestsRate,
      requestsTotal,
      // Failed share of the last interval's requests when there were any, else of all of them.
      failedShare: requestsRate ? (failedRate ?? 0) / requestsRate : requestsTotal ? (failedTotal ?? 0) / requestsTotal : null,
      batchesRate: counterRate(now, before, seconds, 'edgeserve_batches_total', match),
      latency: latency && {
        window: latency.window,
        p50: quantile(0.5, latency.histogram),
        p95: quantile(0.95, latency.histogram),
        p99: quantile(0.99, latency.histogram),
      },
      methods: methodNames.map((method) => methodModel(name, method, info?.batchedMethods?.[method] ?? {}, adaptiveModel(info?.adaptive, method))),
      // No series, no rate: counterRate would call a missing counter 0 calls/s, and Node would show a Workers figure.
      objectCallsRate: objectCallsTotal === null ? null : counterRate(now, before, seconds, 'edgeserve_object_calls_total', match),
      itemsPerObjectCall: carried && { value: carried.histogram.sum / carried.histogram.count, window: carried.window },
    }
  }

  function methodModel(deployment: string, name: string, options: Options, adaptive: AdaptiveModel | null): MethodModel {
    const match = { deployment, method: name }
    const sizes = sumHistogram(now, 'edgeserve_batch_size', match)
    const recent = recentOrAll(sizes, before && sumHistogram(before, 'edgeserve_batch_size', match), before !== null)
    const fill = sumHistogram(now, 'edgeserve_batch_utilization', match)
    return {
      name,
      options,
      sizes,
      meanSize: recent && { value: recent.histogram.sum / recent.histogram.count, window: recent.window },
      fill: fill && fill.count > 0 ? fill.sum / fill.count : null,
      batchesRate: counterRate(now, before, seconds, 'edgeserve_batches_total', match),
      batchesTotal: sumValues(now, 'edgeserve_batches_total', match),
      queueLength: sumValues(now, 'edgeserve_queue_length', match),
      inFlight: sumValues(now, 'edgeserve_batches_in_flight', match),
      adaptive,
    }
  }
}
