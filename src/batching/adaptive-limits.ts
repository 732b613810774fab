import { AdaptiveBatchSize, type AdaptiveSettings, type Clock, type CostPoint } from './adaptive.js'
import type { BatchSizeLimit, BatchSizeLimits, BucketKey, MeasuredBatch } from './limits.js'

/** Keys whose estimates a queue keeps (the most recently run), so keys seen once do not pile up. */
const MAX_ESTIMATES = 64

/** What adaptive limits ask of the queue they serve. */
export interface LearningQueue {
  /** Calls of `key` waiting now: the load on its limit. */
  waitingCalls(key: BucketKey): number
  /** Hears when the size chosen for a key moves. */
  readonly observer: { limitChanged?(from: number, to: number, key: string | undefined): void } | undefined
}

/**
 * `adaptive`: each key's limit is the size its own estimate of its cost
 * chose (an AdaptiveBatchSize, adaptive.ts). Calls without a key share one;
 * each batchKey and model id has its own, since keys may differ in cost
 * (width buckets, models), and the 64 most recently run are kept.
 */
export class AdaptiveLimits implements BatchSizeLimits {
  readonly heldWhileForming = false
  /** Continuous batching learns from each step, not from whole batches: a batch runs as long as its longest sequence. */
  perStep = false
  /** The estimate of the calls without a key. */
  private readonly unkeyed: AdaptiveBatchSize
  private readonly estimates = new Map<string, AdaptiveBatchSize>()
  /** The estimate that learned from the last batch: what stats() and costCurve() report. */
  private lastLearned: AdaptiveBatchSize

  /** `clock`: what times batches (tests drive it), performance.now() by default; `clockStandsStill`: by default, on Workers. */
  constructor(
    private readonly settings: AdaptiveSettings,
    latencyTargetMs: number | undefined,
    private readonly queue: LearningQueue,
    clock?: Clock,
    clockStandsStill?: boolean,
  ) {
    this.unkeyed = new AdaptiveBatchSize(settings, latencyTargetMs, clock, clockStandsStill)
    this.lastLearned = this.unkeyed
  }

  get batchSizeLimit(): number {
    return Math.min(this.lastLearned.chosenSize, this.settings.maxBatchSize)
  }

  limitOf(key: BucketKey): BatchSizeLimit {
    return this.estimateOf(key)
  }

  private estimateOf(key: BucketKey): AdaptiveBatchSize {
    if (key.id === undefined) return this.unkeyed
    let estimate = this.estimates.get(key.id)
    if (estimate === undefined) {
      // A new key starts where the key learned from last settled, and probes from there: the keys
      // of one queue run the same function on other inputs (width buckets, models), whose best sizes
      // are most often near each other. From 1, a key whose batches come about one a second, between
      // other keys' (the OCR recognizer's width buckets), took a dozen seconds or more to climb.
      const { unkeyed, lastLearned } = this
      estimate = new AdaptiveBatchSize(this.settings, unkeyed.latencyTargetMs, unkeyed.now, unkeyed.frozenClock, lastLearned.chosenSize)
      estimate.admitted(unkeyed.floor)
      if (this.estimates.size >= MAX_ESTIMATES) this.estimates.delete(this.estimates.keys().next().value!)
      this.estimates.set(key.id, estimate)
    }
    return estimate
  }

  maxBatchSizeChanged(): void {
    // Nothing to do: each estimate bounds its limit by the maxBatchSize in force when it is read.
  }

  /** A limit never goes below the largest call: a batch must hold any admitted call. */
  admitted(units: number): void {
    if (units <= this.unkeyed.floor) return
    this.unkeyed.admitted(units)
    for (const estimate of this.estimates.values()) estimate.admitted(units)
  }

  batchStarted(batch: MeasuredBatch): void {
    batch.startedAt = this.unkeyed.now()
  }

  batchEnded(batch: MeasuredBatch): void {
    // Continuous batching learned from its steps; a batch whose callers all left ended early.
    if (this.perStep || batch.abandoned) return
    this.learn(batch.bucket, batch.units, batch.entries.length, this.unkeyed.now() - batch.startedAt, batch.waitedOut)
  }

  stepStarted(batch: MeasuredBatch): (calls: readonly { readonly size: number }[]) => void {
    this.perStep = true
    const started = this.unkeyed.now()
    return (calls) => {
      let units = 0
      for (const call of calls) units += call.size
      this.learn(batch.bucket, units, calls.length, this.unkeyed.now() - started, false)
    }
  }

  costCurve(): CostPoint[] {
    return this.lastLearned.curve()
  }

  /** Whether the last batch without a key could be timed (false where the clock stands still while code runs). */
  get measuring(): boolean {
    return this.unkeyed.measuring
  }

  /** `units` in `calls` calls of `bucket` took `executionMs` (a whole batch, or a step of continuous batching). */
  private learn(bucket: MeasuredBatch['bucket'], units: number, calls: number, executionMs: number, waitedOut: boolean): void {
    // The estimate its calls were given: it stays theirs even once 64 other keys have pushed it out.
    const estimate = bucket.limit instanceof AdaptiveBatchSize ? bucket.limit : this.estimateOf(bucket)
    if (bucket.id !== undefined) {
      // The most recently run keys are kept: refresh its place in the Map's order.
      this.estimates.delete(bucket.id)
      this.estimates.set(bucket.id, estimate)
    }
    estimate.learn(units, calls, executionMs, this.queue.waitingCalls(bucket), waitedOut)
    this.lastLearned = estimate
    const chosen = estimate.chosenSize
    if (chosen !== estimate.lastReported) {
      this.queue.observer?.limitChanged?.(estimate.lastReported, chosen, bucket.key ?? bucket.modelId)
      estimate.lastReported = chosen
    }
  }
}
