/**
 * One HTTP load row: autocannon in this process (the server is another
 * process), with exact latencies taken from autocannon's per-response event
 * (its own histogram rounds to whole milliseconds), and the mean batch size
 * from the server's /-/metrics.json delta.
 */
import autocannon from 'autocannon'
import { percentile } from './lib.js'

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
}

interface Family {
  name: string
  samples: { labels: Record<string, string>; sum?: number; count?: number }[]
}

/** sum and count of edgeserve_batch_size for a deployment (all replicas, all methods). */
async function batchSizeTotals(base: string, deployment: string | undefined): Promise<{ sum: number; count: number } | null> {
  if (!deployment) return null
  const response = await fetch(`${base}/-/metrics.json`)
  if (!response.ok) return null
  const { metrics } = (await response.json()) as { metrics: Family[] }
  const family = metrics.find((m) => m.name === 'edgeserve_batch_size')
  let sum = 0
  let count = 0
  for (const sample of family?.samples ?? []) {
    if (sample.labels.deployment !== deployment) continue
    sum += sample.sum ?? 0
    count += sample.count ?? 0
  }
  return { sum, count }
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
}

function cannon(spec: LoadSpec, durationS: number, latencies?: number[]) {
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
    if (latencies) {
      instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
        if (status >= 200 && status < 300) latencies.push(ms)
      })
    }
  })
}

export async function loadRow(spec: LoadSpec): Promise<LoadRow> {
  if (spec.warmupS > 0) await cannon(spec, spec.warmupS)
  const before = await batchSizeTotals(spec.base, spec.deployment)
  const latencies: number[] = []
  const result = await cannon(spec, spec.durationS, latencies)
  const after = await batchSizeTotals(spec.base, spec.deployment)
  const batches = before && after ? after.count - before.count : 0
  return {
    target: spec.target,
    path: spec.path,
    connections: spec.connections,
    requestsPerS: result.requests.total / (result.duration || spec.durationS),
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    meanBatchSize: before && after && batches > 0 ? (after.sum - before.sum) / batches : null,
  }
}
