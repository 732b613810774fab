import { batchedMethodsOf } from '../batching/decorator.js'
import { isBatched, type BatchControls } from '../batching/batch.js'
import type { ObservedBatch, QueueObserver } from '../batching/queue.js'
import { debugLogged, log } from './log.js'
import {
  MetricsRegistry,
  RATIO_BUCKETS,
  SECONDS_BUCKETS,
  SIZE_BUCKETS,
  type Counter,
  type CounterSample,
  type Histogram,
  type HistogramSeries,
  type Labels,
  type MetricsSnapshot,
} from './registry.js'

/** Items per object call: 0 for a call that claims an answer or drops items, then the batch sizes' buckets. */
const CALL_ITEM_BUCKETS = [0, ...SIZE_BUCKETS]

/** Told of each load and eviction of a multiplexed model cache: the replica's metrics count them. */
export interface ModelCacheObserver {
  loadStarted(): void
  evicted(): void
}

/** What the metrics read of a multiplexed function's model cache (`multiplexed()`'s ModelCache). */
export interface ObservedModelCache {
  /** Models loaded and kept now. */
  readonly loaded: number
  observer: ModelCacheObserver | undefined
}

/** The batched methods of an instance: class fields made by batch(), and @batch methods. */
export function batchedMethods(instance: object): Map<string, BatchControls<unknown>> {
  const found = new Map<string, BatchControls<unknown>>()
  for (const name of Object.keys(instance)) {
    const value = (instance as Record<string, unknown>)[name]
    if (isBatched(value)) found.set(name, value)
  }
  for (const [name, controls] of batchedMethodsOf(instance)) found.set(name, controls)
  return found
}

/**
 * The metrics of one replica, labelled by deployment, replica and method:
 * what it takes to tune `maxBatchSize` and `batchWaitTimeoutS` by looking
 * rather than guessing.
 */
export class ReplicaMetrics {
  readonly registry = new MetricsRegistry()
  private readonly labels: { deployment: string; replica: string }
  private readonly methods = new Map<string, BatchControls<unknown>>()

  private readonly batchSize = this.registry.histogram('edgeserve_batch_size', 'Items per batch.', SIZE_BUCKETS)
  private readonly batchWait = this.registry.histogram(
    'edgeserve_batch_wait_seconds',
    'How long the oldest call of each batch waited before the batch started.',
    SECONDS_BUCKETS,
  )
  private readonly batchExecution = this.registry.histogram('edgeserve_batch_execution_seconds', 'Time the batched method took per batch.', SECONDS_BUCKETS)
  private readonly utilization = this.registry.histogram('edgeserve_batch_utilization', 'Batch size over maxBatchSize (units with batchSizeFn).', RATIO_BUCKETS)
  private readonly batches = this.registry.counter('edgeserve_batches_total', 'Batches processed.')
  private readonly queueTime = this.registry.histogram('edgeserve_request_queue_seconds', 'Time each call waited in a batch queue.', SECONDS_BUCKETS)
  private readonly latency = this.registry.histogram(
    'edgeserve_request_duration_seconds',
    'End-to-end time of each request or handle call inside the replica.',
    SECONDS_BUCKETS,
  )
  private readonly requests = this.registry.counter('edgeserve_requests_total', 'Requests and handle calls by status.')
  private readonly modelLoads = this.registry.counter('edgeserve_multiplexed_model_loads_total', 'Models a multiplexed deployment loaded.')
  private readonly modelEvictions = this.registry.counter(
    'edgeserve_multiplexed_model_evictions_total',
    'Models a multiplexed deployment evicted to stay within maxModelsPerReplica.',
  )
  private readonly calls = this.registry.counter(
    'edgeserve_object_calls_total',
    "Calls into the replica's Durable Object (Workers), each carrying one request or handle call, several gathered by a Worker isolate, " +
      'or none (claiming an answer that did not come back in its call, or dropping items whose callers left).',
  )
  private readonly callItems = this.registry.histogram(
    'edgeserve_object_call_items',
    "Requests and handle calls each call into the replica's Durable Object carried (0 for a claim or a drop).",
    CALL_ITEM_BUCKETS,
  )
  /** The two series above, labelled on the first call. */
  private callSeries: { calls: CounterSample; items: HistogramSeries } | undefined = undefined
  private models: readonly ObservedModelCache[] = []

  constructor(deployment: string, replica: number) {
    this.labels = { deployment, replica: String(replica) }
    this.statGauge('edgeserve_queue_length', 'Calls waiting in each batch queue.', 'queueLength')
    this.statGauge('edgeserve_batches_in_flight', 'Batches running now.', 'batchesInFlight')
    this.statGauge(
      'edgeserve_batch_size_limit',
      'The batch size (units with batchSizeFn) each queue allows now: maxBatchSize, or with adaptive the size it chose.',
      'batchSizeLimit',
    )
    this.registry.gauge({
      name: 'edgeserve_multiplexed_models_loaded',
      help: 'Models a multiplexed deployment holds loaded on this replica.',
      read: () => (this.models.length === 0 ? [] : [{ labels: this.labels, value: this.models.reduce((sum, cache) => sum + cache.loaded, 0) }]),
    })
  }

  /** Count the loads and evictions of an instance's multiplexed functions, and read how many models they hold. */
  watchModels(caches: readonly ObservedModelCache[]): void {
    this.models = caches
    if (caches.length === 0) return
    const loads = this.modelLoads.labels(this.labels)
    const evictions = this.modelEvictions.labels(this.labels)
    for (const cache of caches) {
      cache.observer = { loadStarted: () => loads.value++, evicted: () => evictions.value++ }
    }
  }

  /** A gauge per batched method, read from its queue's stats() when metrics are collected. */
  private statGauge(name: string, help: string, stat: 'queueLength' | 'batchesInFlight' | 'batchSizeLimit'): void {
    this.registry.gauge({
      name,
      help,
      read: () => [...this.methods].map(([method, controls]) => ({ labels: { ...this.labels, method }, value: controls.stats()[stat] })),
    })
  }

  /** Watch every batched method of a freshly constructed instance; returns how many it has. */
  attach(instance: object): number {
    const found = batchedMethods(instance)
    for (const [method, controls] of found) this.watch(method, controls)
    return found.size
  }

  /** Watch one batched function under a method name. */
  watch(method: string, controls: BatchControls<unknown>): void {
    this.methods.set(method, controls)
    controls.observe(this.observerFor(method, controls))
  }

  /** The instance went away: stop reading its queues (counters and histograms keep what they counted). */
  detach(): void {
    this.methods.clear()
    this.models = []
  }

  /** Batched methods watched, with their options in force. */
  watched(): ReadonlyMap<string, BatchControls<unknown>> {
    return this.methods
  }

  /** A call reached the replica's Durable Object, carrying `items` requests and handle calls (0: a claim or a drop). */
  callArrived(items: number): void {
    this.callSeries ??= { calls: this.calls.labels(this.labels), items: this.callItems.labels(this.labels) }
    this.callSeries.calls.value++
    this.callSeries.items.observe(items)
  }

  /** The meter for requests (origin 'http') or handle calls (origin 'handle'), labels resolved once. */
  requestMeter(origin: 'http' | 'handle'): RequestMeter {
    return new RequestMeter(this.requests, this.latency, { ...this.labels, origin })
  }

  snapshot(): MetricsSnapshot {
    return this.registry.snapshot()
  }

  private observerFor(method: string, controls: BatchControls<unknown>): QueueObserver {
    const labels = { ...this.labels, method }
    const queueTime = this.queueTime.labels(labels)
    const batchSize = this.batchSize.labels(labels)
    const batchWait = this.batchWait.labels(labels)
    const utilization = this.utilization.labels(labels)
    const batches = this.batches.labels(labels)
    const batchExecution = this.batchExecution.labels(labels)
    // The adaptive limit as last logged, per batch key: a line when it has moved by more than a factor of two since.
    const logged = new Map<string | undefined, number>()
    return {
      batchStarted: (batch) => {
        let units = 0
        let oldestMs = 0
        for (const entry of batch.entries) {
          units += entry.size
          // Calls admitted before the observer was attached have no admission time.
          if (entry.enqueuedAt === 0) continue
          const waitMs = batch.startedAt - entry.enqueuedAt
          queueTime.observe(waitMs / 1000)
          oldestMs = Math.max(oldestMs, waitMs)
        }
        batchSize.observe(batch.entries.length)
        batchWait.observe(oldestMs / 1000)
        utilization.observe(units / controls.options.maxBatchSize)
      },
      batchFinished: (batch, now) => {
        const executionMs = now - batch.startedAt
        batches.value++
        batchExecution.observe(executionMs / 1000)
        if (!debugLogged) return
        log.debug('batch', {
          deployment: labels.deployment,
          replica: Number(labels.replica),
          method,
          size: batch.entries.length,
          waitMs: round(oldestWaitMs(batch)),
          executionMs: round(executionMs),
        })
      },
      limitChanged: (from, to, key) => {
        let last = logged.get(key)
        if (last === undefined) {
          // Keys seen once do not pile up: past 64, start again.
          if (logged.size >= 64) logged.clear()
          logged.set(key, (last = from))
        }
        if (to <= last * 2 && to * 2 >= last) return
        log.info('batch size limit', {
          deployment: labels.deployment,
          replica: Number(labels.replica),
          method,
          ...(key === undefined ? {} : { key }),
          from: last,
          to,
          maxBatchSize: controls.options.maxBatchSize,
        })
        logged.set(key, to)
      },
    }
  }
}

/** Counts requests by status and times them, for one replica and origin. */
export class RequestMeter {
  private readonly latency: HistogramSeries
  private readonly byStatus = new Map<number, CounterSample>()

  constructor(
    private readonly requests: Counter,
    latency: Histogram,
    private readonly labels: Labels,
  ) {
    this.latency = latency.labels(labels)
  }

  record(status: number, seconds: number): void {
    this.latency.observe(seconds)
    let sample = this.byStatus.get(status)
    if (!sample) this.byStatus.set(status, (sample = this.requests.labels({ ...this.labels, status: String(status) })))
    sample.value++
  }
}

/** How long the batch's oldest call waited before it started (calls that joined it while it ran waited none). */
function oldestWaitMs(batch: ObservedBatch): number {
  let waitMs = 0
  for (const entry of batch.entries) if (entry.enqueuedAt > 0) waitMs = Math.max(waitMs, batch.startedAt - entry.enqueuedAt)
  return waitMs
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000
}
