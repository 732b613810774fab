import type { CancelSignal } from './cancel-signal.js'
import { checkCallOptions } from './call-options.js'
import { BackPressureError, cancellation, ItemTooLargeError, RequestCancelledError, RequestTimeoutError } from '../errors.js'
import { requestContext } from './context.js'
import { Batch, Bucket, Entry, type BatchQueueOf, type BatchRunner } from './calls.js'
import type { Clock, CostPoint } from './adaptive.js'
import { AdaptiveLimits } from './adaptive-limits.js'
import { FixedBatchSize, type BatchSizeLimits, type BucketKey } from './limits.js'
import { DeadlineTimer } from './deadlines.js'
import { Scheduler, type QueueObserver, type WaitingCalls } from './scheduler.js'
import { host } from '#batching-host'
import type { RequestIo } from './host.js'
import { formatReceived, getValidPositiveInteger, getValidSeconds, type CallContext, type ResolvedBatchOptions } from './options.js'

/** Per-call options of a batched function. */
export interface CallOptions {
  /** Aborting it removes a queued call at once (`RequestCancelledError`). Any AbortSignal will do. */
  signal?: CancelSignal | undefined
  /** Epoch milliseconds; past it the call fails with `RequestTimeoutError`. */
  deadline?: number | undefined
  /** Facts for `batchKey`, e.g. `{ origin: 'http' }`. Defaults to the ambient request's. */
  context?: CallContext | undefined
}

export interface BatchStats {
  /** Calls waiting to be batched. */
  queueLength: number
  /** Batches handed to the handler so far. */
  batchesRun: number
  /** Items in those batches. */
  itemsRun: number
  /** `itemsRun / batchesRun`, 0 before the first batch. */
  meanBatchSize: number
  /** Batches running now. */
  batchesInFlight: number
  /**
   * The batch size (units with batchSizeFn) the queue allows now: with
   * `adaptive`, the size it chose from what it measured (at most
   * maxBatchSize); otherwise maxBatchSize.
   */
  batchSizeLimit: number
}

// The observer's types, for modules that import them from here.
export type { ObservedBatch, QueueObserver } from './scheduler.js'

/**
 * The Map key of the bucket for a batchKey and a multiplexed model id. Model
 * ids hold no control characters (see multiplexing), so a key that begins
 * with U+0000 is a model's, and a batchKey that begins with it is moved out
 * of the way with U+0001.
 */
function bucketKey(key: string | undefined, modelId: string | undefined): string | undefined {
  if (modelId !== undefined) return `\u0000${modelId}\u0000${key ?? ''}`
  return key !== undefined && (key.startsWith('\u0000') || key.startsWith('\u0001')) ? `\u0001${key}` : key
}

/**
 * The batch queue: gathers single calls and hands them to a runner in
 * batches. One queue per batched function, or per instance and method.
 *
 * - The first call of an idle queue runs at once; calls that arrive while a
 *   batch runs form the next one.
 * - A partial batch waits `batchWaitTimeoutS` from when it starts forming (a
 *   slot is free for it), not from when its first call arrived; a full batch
 *   starts without waiting.
 * - Results are matched to callers by position.
 * - A caller that gives up (abort, deadline) leaves at once and frees its
 *   place; the handler never sees a call that left while queued.
 * - Beyond `maxQueuedRequests` a call is refused at once.
 * - Calls with different `batchKey`s never share a batch.
 * - Every admitted call settles exactly once.
 *
 * When a batch starts, its Scheduler decides (scheduler.ts); how large it
 * may be, its limits (limits.ts).
 */
export class BatchQueue<T, R> implements BatchQueueOf<T, R>, WaitingCalls<T, R> {
  readonly buckets = new Map<string | undefined, Bucket<T, R>>()
  /** The bucket of calls without a key, kept while idle. */
  readonly unkeyed: Bucket<T, R>
  /** Calls waiting to be batched. */
  queued = 0
  /** Batches begun so far: orders buckets by the age of their oldest waiting batch. */
  private batchesBegun = 0
  /** Calls handed to the handler so far. */
  private itemsRun = 0
  private readonly deadlines = new DeadlineTimer<Entry<T, R>>((entry) => entry.leave(new RequestTimeoutError()))
  /**
   * On Workers, while the queue is busy with calls that no deployment made:
   * the I/O of the request they came from, which a call must share to join
   * them (see RequestIo).
   */
  private io: RequestIo | undefined = undefined

  /** Set by a runtime that exports metrics; see QueueObserver. */
  observer: QueueObserver | undefined = undefined
  /** How large each key's next batch may be: maxBatchSize, or with `adaptive` what each key learned. */
  readonly limits: BatchSizeLimits
  private readonly scheduler: Scheduler<T, R>

  /** `clock`: what times batches for `adaptive` (tests drive it); performance.now() by default. */
  constructor(
    readonly options: ResolvedBatchOptions<T>,
    runner: BatchRunner<T, R>,
    clock?: Clock,
    /** Whether that clock stands still while code runs (by default, on Workers): then `adaptive` allows maxBatchSize. */
    clockStandsStill?: boolean,
  ) {
    const { adaptive } = options
    this.limits = adaptive === false ? new FixedBatchSize(options) : new AdaptiveLimits(options, adaptive.latencyTargetMs, this, clock, clockStandsStill)
    this.unkeyed = this.bucketFor(undefined, undefined)
    this.scheduler = new Scheduler(this, runner)
  }

  /** Admit one call, or refuse it at once with the reason it cannot wait. */
  enqueue(entry: Entry<T, R>, callOptions: CallOptions | undefined): void {
    if (callOptions !== undefined) checkCallOptions(callOptions)
    // What the call does not say, the request it is made for does (see AmbientContext).
    const ambient = requestContext.getStore()
    // A deployment's calls share their Durable Object's I/O; others must share the first call's.
    if (this.queued === 0 && this.scheduler.inFlight === 0) this.io = ambient === undefined ? host.currentIo() : undefined
    else if (this.io !== undefined && ambient === undefined) {
      const refusal = this.io.refusal()
      if (refusal !== undefined) return entry.settle({ ok: false, error: refusal })
    }
    // The request's own deadline needs no watch of its own: its signal aborts then (see RequestScope).
    const signal = callOptions?.signal ?? ambient?.signal
    const deadline = callOptions?.deadline
    if (signal !== undefined && signal.aborted) {
      const reason = cancellation(signal.reason)
      const error =
        reason instanceof RequestTimeoutError ? reason : new RequestCancelledError('the request was cancelled before it was queued', { cause: signal.reason })
      return entry.settle({ ok: false, error })
    }
    if (deadline !== undefined && deadline <= Date.now()) {
      return entry.settle({ ok: false, error: new RequestTimeoutError('the request deadline passed before it was queued') })
    }
    const { maxQueuedRequests, batchKey, batchSizeFn } = this.options
    if (this.queued >= maxQueuedRequests) {
      const message = `the batch queue is full: ${this.queued} requests are waiting (maxQueuedRequests: ${maxQueuedRequests}); retry later`
      return entry.settle({ ok: false, error: new BackPressureError(message) })
    }
    // A multiplexed deployment's calls carry their model id: a batch never mixes two.
    const context = callOptions?.context ?? ambient
    const modelId = context?.multiplexedModelId
    let bucket = this.unkeyed
    try {
      if (batchSizeFn !== undefined) entry.size = this.sizeOf(entry.item, batchSizeFn)
      if (batchKey !== undefined || modelId !== undefined) {
        bucket = this.bucketFor(batchKey ? this.keyOf(entry.item, batchKey, context ?? {}) : undefined, modelId)
      }
    } catch (error) {
      return entry.settle({ ok: false, error })
    }
    if (signal !== undefined) {
      entry.signal = signal
      signal.addEventListener('abort', entry, { once: true })
    }
    if (deadline !== undefined) this.deadlines.watch(entry, deadline)
    if (this.observer !== undefined) entry.enqueuedAt = performance.now()
    // The call joins the newest waiting batch of its bucket, or begins one.
    let batch = bucket.batches.at(-1)
    if (batch === undefined || batch.units + entry.size > bucket.limit.batchSizeLimit) {
      batch = new Batch<T, R>(this, bucket, this.batchesBegun++)
      batch.waiting = true
      bucket.batches.push(batch)
    }
    batch.add(entry)
    this.queued++
    this.scheduler.schedule(bucket)
  }

  private sizeOf(item: T, batchSizeFn: (item: T) => number): number {
    const size = batchSizeFn(item)
    if (typeof size !== 'number' || !Number.isFinite(size) || size <= 0) {
      throw new TypeError(`batchSizeFn must return a finite number greater than 0, returned ${formatReceived(size)}`)
    }
    const { maxBatchSize } = this.options
    if (size > maxBatchSize) throw this.tooLarge(size, maxBatchSize)
    this.limits.admitted?.(size)
    return size
  }

  private tooLarge(size: number, maxBatchSize: number): ItemTooLargeError {
    return new ItemTooLargeError(
      `this item has size ${size} but a batch holds at most ${maxBatchSize} (maxBatchSize); ` + 'split the item or raise maxBatchSize',
    )
  }

  private keyOf(item: T, batchKey: (item: T, context: CallContext) => string, context: CallContext): string {
    const key = batchKey(item, context)
    if (typeof key !== 'string') {
      throw new TypeError(`batchKey must return a string, returned ${formatReceived(key)}`)
    }
    return key
  }

  private bucketFor(key: string | undefined, modelId: string | undefined): Bucket<T, R> {
    const id = bucketKey(key, modelId)
    let bucket = this.buckets.get(id)
    if (!bucket) {
      bucket = new Bucket<T, R>(id, key, modelId, this.limits.limitOf({ id, key, modelId }))
      this.buckets.set(id, bucket)
    }
    return bucket
  }

  /** Calls of `key` waiting now (what an adaptive limit weighs as its load). */
  waitingCalls(key: BucketKey): number {
    if (key.id === undefined && this.buckets.size === 1) return this.queued
    return this.buckets.get(key.id)?.waitingCalls ?? 0
  }

  /**
   * A call has settled: it leaves the batch it waited in (the handler never
   * sees it), or counts as answered in the one running (the last answer
   * frees the batch's slot at once, not when the runner unwinds); its abort
   * listener and deadline go.
   */
  detach(entry: Entry<T, R>, batch: Batch<T, R>): void {
    if (!batch.running) this.leaveWaitingBatch(entry, batch)
    else if (++batch.gone === batch.entries.length) this.scheduler.release(batch)
    if (this.deadlines.watched.size > 0) this.deadlines.forget(entry)
    entry.signal?.removeEventListener('abort', entry)
  }

  private leaveWaitingBatch(entry: Entry<T, R>, batch: Batch<T, R>): void {
    batch.gone++
    batch.units -= entry.size
    if (batch.live === 0) this.unlink(batch.bucket, batch)
    if (--this.queued === 0) this.scheduler.queueEmptied()
  }

  /** Take a waiting batch out of its bucket (once); a keyed bucket left empty goes, so keys seen once do not pile up. */
  private unlink(bucket: Bucket<T, R>, batch: Batch<T, R>): void {
    if (!batch.waiting) return
    batch.waiting = false
    // Batches start oldest first, so the one taken out is nearly always the head.
    if (bucket.batches[0] === batch) bucket.batches.shift()
    else bucket.batches.splice(bucket.batches.indexOf(batch), 1)
    if (bucket.batches.length === 0 && bucket !== this.unkeyed) this.buckets.delete(bucket.id)
  }

  stats(): BatchStats {
    const { batchesRun, inFlight } = this.scheduler
    return {
      queueLength: this.queued,
      batchesRun,
      itemsRun: this.itemsRun,
      meanBatchSize: batchesRun === 0 ? 0 : this.itemsRun / batchesRun,
      batchesInFlight: inFlight,
      batchSizeLimit: this.limits.batchSizeLimit,
    }
  }

  /**
   * With `adaptive`: the mean time of a batch at each size measured lately
   * (of the key that ran last, as `batchSizeLimit`); empty without it.
   */
  costCurve(): CostPoint[] {
    return this.limits.costCurve?.() ?? []
  }

  /** The calls waiting now are not to wait for more (see Scheduler.startNextBatchNow). */
  startNextBatchNow(): void {
    if (this.queued > 0) this.scheduler.startNextBatchNow()
  }

  setMaxBatchSize(value: unknown): void {
    this.options.maxBatchSize = getValidPositiveInteger('maxBatchSize', value)
    this.limits.maxBatchSizeChanged()
    this.scheduler.schedule()
  }

  setBatchWaitTimeoutS(value: unknown): void {
    this.options.batchWaitTimeoutS = getValidSeconds('batchWaitTimeoutS', value)
    this.scheduler.schedule()
  }

  setMaxConcurrentBatches(value: unknown): void {
    this.options.maxConcurrentBatches = getValidPositiveInteger('maxConcurrentBatches', value)
    this.scheduler.schedule()
  }

  /**
   * The bucket's oldest batch, out of the queue to run, or undefined if
   * none of its calls waits any more. Usually it is taken as it is. It is
   * reshaped only when calls left it while queued (they are dropped, and
   * later calls fill the room), or when maxBatchSize changed while it waited
   * (it gives its overflow back, or takes calls from the batch behind it).
   */
  takeOldest(bucket: Bucket<T, R>, limit: number): Batch<T, R> | undefined {
    let batch = bucket.batches[0]!
    if (batch.gone > 0) batch.compact()
    if (batch.units > limit) {
      // Larger than a batch may now be: the front part runs, the rest waits.
      const front = new Batch<T, R>(this, bucket, batch.sequence)
      this.move(batch, front, limit)
      if (batch.live === 0) this.unlink(bucket, batch)
      batch = front
    } else {
      this.unlink(bucket, batch)
      for (let next = bucket.batches[0]; next !== undefined && batch.units < limit; next = bucket.batches[0]) {
        const moved = this.move(next, batch, limit - batch.units)
        if (next.live === 0) this.unlink(bucket, next)
        if (moved === 0) break
      }
    }
    if (batch.live === 0) return undefined
    batch.running = true
    this.queued -= batch.live
    this.itemsRun += batch.live
    return batch
  }

  join(batch: Batch<T, R>, freeUnits: number): number {
    if (batch.released) return 0
    const bucket = this.buckets.get(batch.bucket.id)
    if (!bucket) return 0
    let joined = 0
    for (let from = bucket.batches[0]; from !== undefined && freeUnits > 0; from = bucket.batches[0]) {
      const before = batch.units
      const moved = this.move(from, batch, freeUnits)
      freeUnits -= batch.units - before
      if (from.live === 0) this.unlink(bucket, from)
      joined += moved
      if (moved === 0) break
    }
    return joined
  }

  /**
   * Move the leading calls of `from` that fit in `maxUnits` into `into`, in
   * order, and say how many moved. A call larger than maxBatchSize allows
   * (admitted before it was lowered) fails here rather than wait forever.
   */
  private move(from: Batch<T, R>, into: Batch<T, R>, maxUnits: number): number {
    const { maxBatchSize } = this.options
    const { entries } = from
    let units = 0
    let moved = 0
    let index = 0
    for (; index < entries.length; index++) {
      const entry = entries[index]!
      if (entry.settled) continue
      if (entry.size > maxUnits && entry.size > maxBatchSize) {
        entry.settle({ ok: false, error: this.tooLarge(entry.size, maxBatchSize) })
        continue
      }
      if (units + entry.size > maxUnits) break
      units += entry.size
      moved++
      from.gone++
      from.units -= entry.size
      into.add(entry)
    }
    // Every entry taken off the front had settled or moved: counted in `gone`.
    entries.splice(0, index)
    from.items.splice(0, index)
    from.gone -= index
    if (into.running) {
      // Joining a running batch (continuous batching): they leave the queue.
      this.queued -= moved
      this.itemsRun += moved
      if (this.queued === 0) this.scheduler.queueEmptied()
    }
    return moved
  }
}

/** A promise-returning batched function's calls: an entry for each item, queued, and the promise of its result. */
export function promiseCalls<T, R>(queue: BatchQueue<T, R>): (item: T, callOptions?: CallOptions) => Promise<R> {
  return (item, callOptions) => {
    const entry = new Entry<T, R>(item)
    const promise = new Promise<R>((resolve, reject) => {
      entry.resolve = resolve
      entry.reject = reject
    })
    // Only an object is options: `items.map(f)` passes each item's index there, and that is a plain call.
    queue.enqueue(entry, typeof callOptions === 'object' && callOptions !== null ? callOptions : undefined)
    return promise
  }
}
