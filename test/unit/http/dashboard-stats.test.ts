/**
 * The dashboard's numbers for a Worker's object calls, from literal
 * /-/metrics.json bodies: how many calls per second went into a deployment's
 * Durable Objects and how many requests and handle calls each carried, added
 * over its replicas. A deployment with no such series (every one on Node)
 * gets null for both, which the card takes as "show nothing".
 */
import { describe, expect, it } from 'vitest'
import { buildModel } from '../../../src/http/dashboard/client/stats.js'
import type { MetricsBody } from '../../../src/http/dashboard/client/wire.js'
import type { MetricFamily } from '../../../src/metrics/registry.js'

/** SIZE_BUCKETS, as a replica's metrics report them. */
const BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256]

/** What one replica of HousePricePredictor has counted: requests, calls into its object, and the items those carried. */
interface ReplicaCounts {
  requests: number
  calls: number
  items: number
  /** The items histogram's cumulative counts, SIZE_BUCKETS' bounds. */
  counts: number[]
}

/** A /-/metrics.json body at `time` with two HousePricePredictor replicas, and a BatchAdder that only counts requests, as on Node. */
function snapshot(time: number, replicas: [ReplicaCounts, ReplicaCounts], adderRequests: number): MetricsBody {
  const labels = (replica: number) => ({ deployment: 'HousePricePredictor', replica: String(replica) })
  return {
    time,
    metrics: [
      {
        name: 'edgeserve_requests_total',
        help: '',
        type: 'counter',
        samples: [
          ...replicas.map((r, i) => ({ labels: { ...labels(i), origin: 'http', status: '200' }, value: r.requests })),
          { labels: { deployment: 'BatchAdder', replica: '0', origin: 'http', status: '200' }, value: adderRequests },
        ],
      },
      { name: 'edgeserve_object_calls_total', help: '', type: 'counter', samples: replicas.map((r, i) => ({ labels: labels(i), value: r.calls })) },
      {
        name: 'edgeserve_object_call_items',
        help: '',
        type: 'histogram',
        buckets: BUCKETS,
        samples: replicas.map((r, i) => ({ labels: labels(i), counts: r.counts, sum: r.items, count: r.calls })),
      },
    ],
  }
}

/**
 * Before: replica 0 took 10 calls of 4 items, replica 1 took 5 calls of 3.
 * Now, 2 s later: replica 0 took 20 more calls of 8, replica 1 took 10 more of 8.
 */
const before = snapshot(
  1_000,
  [
    { requests: 40, calls: 10, items: 40, counts: [0, 0, 10, 10, 10, 10, 10, 10, 10] },
    { requests: 15, calls: 5, items: 15, counts: [0, 0, 5, 5, 5, 5, 5, 5, 5] },
  ],
  7,
)
const now = snapshot(
  3_000,
  [
    { requests: 200, calls: 30, items: 200, counts: [0, 0, 10, 30, 30, 30, 30, 30, 30] },
    { requests: 95, calls: 15, items: 95, counts: [0, 0, 5, 15, 15, 15, 15, 15, 15] },
  ],
  9,
)

/** The same counts a second later: no call in between. */
const idle: MetricsBody = { time: 4_000, metrics: now.metrics }

const objectCalls = (model: ReturnType<typeof buildModel>, name: string) => {
  const d = model.deployments.find((deployment) => deployment.name === name)!
  return { rate: d.objectCallsRate, items: d.itemsPerObjectCall }
}

describe('buildModel: object calls and the items they carried', () => {
  it('gives calls per second over the poll interval and the mean items per call of that interval, across replicas', () => {
    const model = buildModel(now, before, null)
    // (30 + 15 - 10 - 5) calls in 2 s; (200 + 95 - 40 - 15) items in those 30 calls.
    expect(objectCalls(model, 'HousePricePredictor')).toEqual({ rate: 15, items: { value: 8, window: 'interval' } })
  })

  it('falls back to every call since start when the interval had none, and has no rate before a second poll', () => {
    // 295 items in 45 calls since start.
    expect(objectCalls(buildModel(idle, now, null), 'HousePricePredictor')).toEqual({ rate: 0, items: { value: 295 / 45, window: 'cumulative' } })
    expect(objectCalls(buildModel(now, null, null), 'HousePricePredictor')).toEqual({ rate: null, items: { value: 295 / 45, window: 'cumulative' } })
  })

  it('gives null for both where the deployment has no object calls, as every deployment on Node', () => {
    // Not a rate of 0: there is nothing to count, and the card shows nothing rather than a Workers figure.
    expect(objectCalls(buildModel(now, before, null), 'BatchAdder')).toEqual({ rate: null, items: null })
    expect(objectCalls(buildModel(now, null, null), 'BatchAdder')).toEqual({ rate: null, items: null })
    const node: MetricsBody = { time: now.time, metrics: now.metrics.filter((family: MetricFamily) => !family.name.startsWith('edgeserve_object_')) }
    const nodeBefore: MetricsBody = {
      time: before.time,
      metrics: before.metrics.filter((family: MetricFamily) => !family.name.startsWith('edgeserve_object_')),
    }
    expect(objectCalls(buildModel(node, nodeBefore, null), 'HousePricePredictor')).toEqual({ rate: null, items: null })
    // The rest of the card is unchanged by it.
    expect(buildModel(node, nodeBefore, null).deployments.find((d) => d.name === 'HousePricePredictor')!.requestsRate).toBe(120)
  })
})
