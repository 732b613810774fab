import type { CostPoint } from './adaptive.js'

/**
 * How large may a key's next batch be? The queue asks its limits, and keeps
 * each key's answer with that key's calls:
 *
 * - without `adaptive`, `FixedBatchSize`: maxBatchSize, for every key;
 * - with it, `AdaptiveLimits` (adaptive-limits.ts): a size each key learns
 *   from what its batches cost, at most maxBatchSize.
 *
 * A key is a batchKey, a multiplexed model id, both, or neither.
 */
export interface BatchSizeLimits {
  /** The limit of the calls of one key: made when the queue first holds calls of that key. */
  limitOf(key: BucketKey): BatchSizeLimit
  /** The limit stats() reports: maxBatchSize, or the size adaptive chose for the key that ran last (not a probe's). */
  readonly batchSizeLimit: number
  /**
   * Whether a batch that has begun forming keeps the limit it began with
   * until it starts. A fixed size does: as in Ray Serve, setMaxBatchSize
   * applies from the next batch to form. An adaptive limit does not: it is
   * learned, and moves with every batch.
   */
  readonly heldWhileForming: boolean
  /** setMaxBatchSize() changed options.maxBatchSize: the limits follow it. */
  maxBatchSizeChanged(): void

  // Limits that learn from what batches cost (adaptive) have the rest. A
  // fixed size learns nothing, and then no batch is timed for it.

  /** A call of `units` (batchSizeFn units) was admitted: a batch must be able to hold it. */
  admitted?(units: number): void
  /** A batch starts running. */
  batchStarted?(batch: MeasuredBatch): void
  /** A running batch's last caller has its answer (or has gone): its slot is free. */
  batchEnded?(batch: MeasuredBatch): void
  /** Continuous batching: a step of `batch` starts; call what it returns with the step's calls once it has run. */
  stepStarted?(batch: MeasuredBatch): (calls: readonly { readonly size: number }[]) => void
  /** The mean time of a batch at each size measured lately (of the key that ran last). */
  costCurve?(): CostPoint[]
}

/** One key's limit: the queue reads it for every call, so it is a field, kept current by the limits that made it. */
export interface BatchSizeLimit {
  /** The most units (items, or batchSizeFn units) the key's next batch may hold. */
  readonly batchSizeLimit: number
  /**
   * The units at which the key's forming batch is full: it starts at once,
   * without waiting out batchWaitTimeoutS. The limit, but while adaptive
   * probes a larger size, the size it chose: the probe takes more of what is
   * queued when the batch starts, and never makes calls wait for more.
   */
  readonly fullBatchSize: number
}

/** Whose calls a limit is for: the key of a queue's bucket; `id` is undefined for calls with neither a batchKey nor a model id. */
export interface BucketKey {
  readonly id: string | undefined
  readonly key: string | undefined
  readonly modelId: string | undefined
}

/** A batch, as limits that learn see it. */
export interface MeasuredBatch {
  readonly bucket: BucketKey & { readonly limit: BatchSizeLimit }
  /** Its calls' units in all. */
  readonly units: number
  readonly entries: readonly unknown[]
  /** When it started, on the clock of whoever timed it (0 if nothing did). */
  startedAt: number
  /** Every caller left while it ran: it ended early, and its time says nothing of its cost. */
  readonly abandoned: boolean
  /** It started because batchWaitTimeoutS ran out before it was full: the load did not fill it in that time. */
  readonly waitedOut: boolean
}

/** maxBatchSize for every key: batch() without `adaptive`. One object serves as every key's limit. */
export class FixedBatchSize implements BatchSizeLimits, BatchSizeLimit {
  batchSizeLimit: number
  /** The same as batchSizeLimit: a field, not a getter, so that a request's path runs nothing of this file. */
  fullBatchSize: number
  readonly heldWhileForming = true

  constructor(private readonly options: { readonly maxBatchSize: number }) {
    this.batchSizeLimit = this.fullBatchSize = options.maxBatchSize
  }

  limitOf(): BatchSizeLimit {
    return this
  }

  maxBatchSizeChanged(): void {
    this.batchSizeLimit = this.fullBatchSize = this.options.maxBatchSize
  }
}
