import type { CancelSignal } from './cancel-signal.js'
import { checkCallOptions } from './call-options.js'
import { BackPressureError, cancellation, ItemTooLargeError, RequestCancelledError, RequestTimeoutError } from '../errors.js'
import { currentContext, runWithContext, type AmbientContext } from './context.js'
import { DeadlineTimer } from './deadlines.js'
import { Batch, type BatchPlace, type Entry, type EntryQueue } from './entry.js'
import { LinkedQueue } from './list.js'
import { afterLoopTurns, mayStartBeforeLoopTurns, noteBatchStarted } from './loop-turn.js'
import {
  formatReceived,
  getValidPositiveInteger,
  getValidSeconds,
  type CallContext,
  type ResolvedBatchOptions,
} from './options.js'

/** Per-call options of a batched function. */
export interface CallOptions {
  /** Aborting it removes a queued call at once (`RequestCancelledError`). Any AbortSignal will do. */
  signal?: CancelSignal | undefined
  /** Epoch milliseconds; past it the call fails with `RequestTimeoutError`. */
  deadline?: number
  /** Facts for `batchKey`, e.g. `{ origin: 'http' }`. Defaults to the ambient request's. */
  context?: CallContext
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
}

/**
 * Watches a queue for metrics and logs. Calls are synchronous and cheap to
 * skip: without an observer the queue does no timing at all.
 */
export interface QueueObserver {
  /** One call left the queue for a batch after waiting `waitMs`. */
  dequeued(waitMs: number): void
  /** A batch of `size` items (`units` with batchSizeFn) started; its oldest call waited `waitMs`. */
  batchStarted(size: number, units: number, waitMs: number): void
  /** A batch finished after `executionMs`. */
  batchFinished(size: number, waitMs: number, executionMs: number): void
}

/** Runs one batch; resolves when it is done with every entry. */
export type BatchRunner<T, R> = (batch: Batch<T, R>) => Promise<void>

/**
 * Calls that may share a batch: one bucket per batch key, holding the
 * batches waiting for that key, oldest first. A call joins the newest one
 * unless it would overflow it.
 */
class Bucket<T, R> extends LinkedQueue<Batch<T, R>> implements BatchPlace {
  constructor(
    /** Its key in the queue's Map: see bucketKey(). */
    readonly mapKey: string | undefined,
    readonly key: string | undefined,
    readonly modelId: string | undefined,
  ) {
    super()
  }
}

/**
 * Whether the batches waiting in a bucket hold `limit` units between them,
 * enough for a full batch (the head takes calls from the batches behind it
 * when it starts: see shapeHead()). Summed when asked, from the head: usually
 * the head alone answers, and a call's admission adds to no bucket-wide count.
 */
function holdsFullBatch<T, R>(bucket: Bucket<T, R>, limit: number): boolean {
  let units = 0
  for (let batch = bucket.head; batch !== undefined; batch = batch.next) if ((units += batch.units) >= limit) return true
  return false
}

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

const ONCE = { once: true }
/** The context of a batch whose calls name no model. */
const NO_MODEL: AmbientContext = Object.freeze({ origin: 'batch' })
const resolved = Promise.resolve()

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
 * Scheduling is one `pump()` that asks "may a batch start now?", triggered
 * by arrivals (one macrotask per burst, so calls that arrive in the same
 * round of I/O share a batch), by finished batches and by the one wait
 * timer, or, with `strideS`, only by the stride ticker.
 */
export class BatchQueue<T, R> implements EntryQueue<T, R> {
  private readonly buckets = new Map<string | undefined, Bucket<T, R>>()
  /** The bucket of calls without a key, kept while idle: no Map lookup per call. */
  private readonly unkeyed = new Bucket<T, R>(undefined, undefined, undefined)
  /**
   * How many calls may be queued before a call takes the full admission
   * path: `maxQueuedRequests` (capped to a small integer, so the check is one
   * integer compare) when the queue has no batchKey and no batchSizeFn and a
   * plain call goes to `unkeyed` with size 1 and no observer is attached;
   * else 0, so every call does (and an observed call is timed there).
   */
  private fastAdmissionLimit: number = 0
  /** What `fastAdmissionLimit` is while no observer is attached. */
  private readonly unobservedAdmissionLimit: number = 0
  /**
   * The options a call's path reads, kept on the queue: a field of its own is
   * one load, where `this.options.x` is two and a check of the options'
   * shape. The queue reads these three from its fields only, never from
   * `options`. `maxBatchSize` and `maxConcurrentBatches` follow their
   * setters, which also update `options` for readers outside the queue
   * (continuous batching, admin routes); `striding` never changes. Each has
   * an initializer, as `fastAdmissionLimit` does: a field declared without
   * one is first defined as undefined, and
   * V8 then checks on every call that it holds a small integer (a boolean:
   * each kind of falsy value).
   */
  private maxBatchSize: number = 0
  private maxConcurrentBatches: number = 0
  private readonly striding: boolean = false
  private queued = 0
  /**
   * Admitted calls with an abort signal or a deadline that have not settled.
   * While there are none, a batch's results are handed out with nothing to
   * undo per call (`Batch.handOut()`), and settling a call skips `unwatch()`.
   */
  watchedCalls = 0
  /** Batches begun so far: orders buckets by the age of their oldest waiting batch. */
  private batchesBegun = 0
  private inFlight = 0
  private batchesRun = 0
  private itemsRun = 0

  /**
   * `noSlotOrStartScheduled()`, kept as one field: every concurrency slot is
   * taken (`inFlight`) or a full batch's start is scheduled
   * (`fullPumpScheduled`). Updated where those change, once a batch; read on
   * every call, where two fields and two compares cost twice as much.
   */
  private startBlocked = false
  private pumpScheduled = false
  private readonly pumpTask = (): void => {
    this.pumpScheduled = false
    this.pump()
  }
  private readonly strideTask = (): void => this.pump()
  private fullPumpScheduled = false
  private readonly fullPumpTask = (): void => {
    this.fullPumpScheduled = false
    this.updateStartBlocked()
    this.pump()
  }
  private readonly waitTask = (): void => {
    this.waitTimer = undefined
    this.pump()
  }
  /**
   * The batch being formed: when its wait began (a slot was free for it and
   * it was not full) and the size and wait it began with. As in Ray Serve,
   * setMaxBatchSize and setBatchWaitTimeoutS apply from the next batch to
   * form; the one forming keeps what it started with.
   */
  private forming: { since: number; maxBatchSize: number; waitMs: number } | undefined = undefined
  private waitTimer: ReturnType<typeof setTimeout> | undefined = undefined
  private strideTimer: ReturnType<typeof setInterval> | undefined = undefined
  private readonly deadlines = new DeadlineTimer<Entry<T, R>>((entry) => entry.leave(new RequestTimeoutError()))

  private observed: QueueObserver | undefined = undefined

  /** Set by a runtime that exports metrics; see QueueObserver. */
  get observer(): QueueObserver | undefined {
    return this.observed
  }

  set observer(observer: QueueObserver | undefined) {
    this.observed = observer
    this.fastAdmissionLimit = observer === undefined ? this.unobservedAdmissionLimit : 0
  }

  constructor(
    readonly options: ResolvedBatchOptions<T>,
    private readonly runner: BatchRunner<T, R>,
  ) {
    this.buckets.set(undefined, this.unkeyed)
    const unkeyedOnly = options.batchKey === undefined && options.batchSizeFn === undefined
    this.fastAdmissionLimit = this.unobservedAdmissionLimit = unkeyedOnly ? Math.min(options.maxQueuedRequests, 2 ** 30) : 0
    this.maxBatchSize = options.maxBatchSize
    this.maxConcurrentBatches = options.maxConcurrentBatches
    this.striding = options.strideS > 0
  }

  /** Admit one call, or refuse it at once with the reason it cannot wait. */
  enqueue(entry: Entry<T, R>, callOptions: CallOptions | undefined): void {
    const ambient = currentContext()
    if (callOptions !== undefined) return this.admit(entry, callOptions, ambient)
    // The common call has nothing to check but the queue's length: no
    // options, no request around it, no key or size to compute, no observer
    // to time it for. It takes a path small enough for V8 to inline into the
    // call itself.
    if (ambient === undefined && this.queued < this.fastAdmissionLimit) {
      this.queueIn(entry, this.unkeyed)
    } else {
      this.admit(entry, undefined, ambient)
    }
  }

  /** Every other call: its signal, deadline, key, size and model id are checked and watched. */
  private admit(entry: Entry<T, R>, callOptions: CallOptions | undefined, ambient: AmbientContext | undefined): void {
    if (callOptions !== undefined) checkCallOptions(callOptions)
    // The request's own deadline needs no watch of its own: its signal aborts then (see RequestScope).
    const signal = callOptions?.signal ?? ambient?.signal
    const deadline = callOptions?.deadline
    if (signal !== undefined && signal.aborted) {
      const reason = cancellation(signal.reason)
      return entry.refuse(reason instanceof RequestTimeoutError ? reason : new RequestCancelledError('the request was cancelled before it was queued', { cause: signal.reason }))
    }
    if (deadline !== undefined && deadline <= Date.now()) {
      return entry.refuse(new RequestTimeoutError('the request deadline passed before it was queued'))
    }
    const { maxQueuedRequests, batchKey, batchSizeFn } = this.options
    // A multiplexed deployment's calls carry their model id: a batch never mixes two.
    const context = callOptions?.context ?? ambient
    const modelId = context?.multiplexedModelId
    if (this.queued >= maxQueuedRequests) {
      return entry.refuse(
        new BackPressureError(
          `the batch queue is full: ${this.queued} requests are waiting (maxQueuedRequests: ${maxQueuedRequests}); retry later`,
        ),
      )
    }
    let bucket = this.unkeyed
    if (batchSizeFn !== undefined || batchKey !== undefined || modelId !== undefined) {
      try {
        if (batchSizeFn) entry.extra().size = this.sizeOf(entry.item, batchSizeFn)
        if (batchKey || modelId !== undefined) {
          bucket = this.bucketFor(batchKey ? this.keyOf(entry.item, batchKey, context ?? {}) : undefined, modelId)
        }
      } catch (error) {
        return entry.refuse(error)
      }
    }
    if (signal !== undefined) {
      entry.extra().signal = signal
      signal.addEventListener('abort', entry, ONCE)
    }
    if (deadline !== undefined) entry.extra().deadlineWatch = this.deadlines.watch(entry, deadline)
    if (signal !== undefined || deadline !== undefined) this.watchedCalls++
    // `!== undefined`, not a truthiness test: for a field V8 cannot type,
    // that compiles to a check for each falsy kind of value (false, '', 0,
    // a BigInt...), a dozen machine instructions on every call.
    if (this.observed !== undefined) entry.extra().enqueuedAt = performance.now()
    this.queueIn(entry, bucket)
  }

  /** The call joins the newest waiting batch of its bucket, or begins one. */
  private queueIn(entry: Entry<T, R>, bucket: Bucket<T, R>): void {
    const tail = bucket.tail
    if (tail === undefined || tail.units + entry.size > this.maxBatchSize) return this.queueInNewBatch(entry, bucket)
    tail.add(entry)
    this.queued++
    this.scheduleArrival(bucket)
  }

  /**
   * As queueIn(), for a call that begins a batch. Its own method, not a
   * branch that queueIn() goes on from: after the out-of-line construction
   * of a Batch, V8 checked the maps of the entry, the tail, the bucket and
   * the queue again on every call, about 30 machine instructions a call in
   * the engine bench (bench/engine-instructions.ts: 1,123 to 1,085).
   */
  private queueInNewBatch(entry: Entry<T, R>, bucket: Bucket<T, R>): void {
    const batch = new Batch<T, R>(this, bucket, this.batchesBegun++)
    batch.waiting = true
    bucket.push(batch)
    batch.add(entry)
    this.queued++
    this.scheduleArrival(bucket)
  }

  private sizeOf(item: T, batchSizeFn: (item: T) => number): number {
    const size = batchSizeFn(item)
    if (typeof size !== 'number' || !Number.isFinite(size) || size <= 0) {
      throw new TypeError(`batchSizeFn must return a finite number greater than 0, returned ${formatReceived(size)}`)
    }
    if (size > this.maxBatchSize) throw this.tooLarge(size, this.maxBatchSize)
    return size
  }

  private tooLarge(size: number, maxBatchSize: number): ItemTooLargeError {
    return new ItemTooLargeError(
      `this item has size ${size} but a batch holds at most ${maxBatchSize} (maxBatchSize); ` +
        'split the item or raise maxBatchSize',
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
    const mapKey = bucketKey(key, modelId)
    let bucket = this.buckets.get(mapKey)
    if (!bucket) {
      bucket = new Bucket<T, R>(mapKey, key, modelId)
      this.buckets.set(mapKey, bucket)
    }
    return bucket
  }

  /** A keyed bucket goes once empty, so keys seen once do not pile up. */
  private dropIfEmpty(bucket: Bucket<T, R>): void {
    if (bucket.count === 0 && bucket !== this.unkeyed) this.buckets.delete(bucket.mapKey)
  }

  detach(entry: Entry<T, R>, batch: Batch<T, R>): void {
    if (!batch.running) this.leaveWaitingBatch(entry, batch)
    // The last caller of a batch has its answer: its slot is free now, not
    // when the runner unwinds.
    else if (++batch.gone === batch.entries.length) this.release(batch)
    this.unwatch(entry)
  }

  /** Stop listening for a settled call's abort and watching its deadline. */
  unwatch(entry: Entry<T, R>): void {
    if (this.watchedCalls === 0) return
    let watched = false
    const { deadlineWatch, signal } = entry
    if (deadlineWatch !== undefined) {
      this.deadlines.forget(deadlineWatch)
      entry.extra().deadlineWatch = undefined
      watched = true
    }
    if (signal !== undefined) {
      signal.removeEventListener('abort', entry)
      watched = true
    }
    if (watched) this.watchedCalls--
  }

  /** The call leaves a batch that has not started: the handler never sees it. */
  private leaveWaitingBatch(entry: Entry<T, R>, batch: Batch<T, R>): void {
    batch.gone++
    batch.units -= entry.size
    if (batch.live === 0) this.unlink(this.bucketOf(batch), batch)
    if (--this.queued === 0) this.stopForming()
  }

  private bucketOf(batch: Batch<T, R>): Bucket<T, R> {
    return batch.place as Bucket<T, R>
  }

  /** Take a waiting batch out of its bucket (once), dropping the bucket if that empties a keyed one. */
  private unlink(bucket: Bucket<T, R>, batch: Batch<T, R>): void {
    if (!batch.waiting) return
    batch.waiting = false
    bucket.remove(batch)
    this.dropIfEmpty(bucket)
  }

  stats(): BatchStats {
    return {
      queueLength: this.queued,
      batchesRun: this.batchesRun,
      itemsRun: this.itemsRun,
      meanBatchSize: this.batchesRun === 0 ? 0 : this.itemsRun / this.batchesRun,
      batchesInFlight: this.inFlight,
    }
  }

  setMaxBatchSize(value: unknown): void {
    this.options.maxBatchSize = this.maxBatchSize = getValidPositiveInteger('maxBatchSize', value)
    this.schedule()
  }

  setBatchWaitTimeoutS(value: unknown): void {
    this.options.batchWaitTimeoutS = getValidSeconds('batchWaitTimeoutS', value)
    this.schedule()
  }

  setMaxConcurrentBatches(value: unknown): void {
    this.options.maxConcurrentBatches = this.maxConcurrentBatches = getValidPositiveInteger('maxConcurrentBatches', value)
    this.updateStartBlocked()
    this.schedule()
  }

  // --- scheduling -----------------------------------------------------------

  /**
   * A call joined `bucket`: only that bucket can have become full. Kept apart
   * from `schedule()` and its walk over every bucket because it runs on every
   * call: V8 charges a function's inlining budget with what an inlined callee
   * has inlined itself, and with that walk in it the queue's admission grew
   * too large to inline into the call (bench/limits.md).
   */
  private scheduleArrival(bucket: Bucket<T, R>): void {
    if (this.noSlotOrStartScheduled()) return
    if (this.striding === true) return this.startStriding()
    this.startSoon(holdsFullBatch(bucket, this.batchLimit()))
  }

  /** A batch ended or a setting changed: any bucket may hold a full batch. */
  private schedule(): void {
    if (this.noSlotOrStartScheduled()) return
    if (this.striding === true) return this.startStriding()
    this.startSoon(this.hasFullBatch())
  }

  /**
   * Nothing can start now: every concurrency slot is taken, or a batch
   * start is already scheduled. The batch that frees a slot schedules again,
   * so a wait starts when a slot frees, not before.
   */
  private noSlotOrStartScheduled(): boolean {
    // `=== true` for the reason given in admit().
    return this.startBlocked === true
  }

  private updateStartBlocked(): void {
    this.startBlocked = this.inFlight >= this.maxConcurrentBatches || this.fullPumpScheduled === true
  }

  /** Under strideS, batches start only on the stride's ticks. */
  private startStriding(): void {
    this.strideTimer ??= setInterval(this.strideTask, this.options.strideS * 1000)
  }

  private startSoon(hasFullBatch: boolean): void {
    // A full batch has nothing to wait for: start it on a microtask, unless
    // batches have held the thread long enough since the event loop last
    // turned (see loop-turn.ts). A partial one waits for the end of this round
    // of I/O, so that requests that arrived together share it (see macrotask.ts).
    if (hasFullBatch && mayStartBeforeLoopTurns()) {
      this.fullPumpScheduled = true
      this.startBlocked = true
      // A promise job rather than queueMicrotask(), which on Node builds an
      // async resource per call: this runs once per batch.
      resolved.then(this.fullPumpTask)
      return
    }
    if (this.pumpScheduled) return
    this.pumpScheduled = true
    afterLoopTurns(this.pumpTask)
  }

  /** The most units the next batch may hold: the forming batch's own, else the current setting. */
  private batchLimit(): number {
    return this.forming ? this.forming.maxBatchSize : this.maxBatchSize
  }

  private hasFullBatch(): boolean {
    const limit = this.batchLimit()
    if (this.buckets.size === 1) return holdsFullBatch(this.unkeyed, limit)
    for (const bucket of this.buckets.values()) if (holdsFullBatch(bucket, limit)) return true
    return false
  }

  private pump(): void {
    const { allowSmallBatch } = this.options
    while (this.inFlight < this.maxConcurrentBatches && this.queued > 0) {
      const limit = this.batchLimit()
      const bucket = this.nextBucket(limit)
      if (!holdsFullBatch(bucket, limit) && (!allowSmallBatch || this.options.batchWaitTimeoutS > 0 || this.forming)) {
        // A partial batch with a free slot: it forms from now, with the
        // settings in force now.
        const now = Date.now()
        const forming = (this.forming ??= {
          since: now,
          maxBatchSize: this.maxBatchSize,
          waitMs: this.options.batchWaitTimeoutS * 1000,
        })
        if (!allowSmallBatch) break
        const due = forming.since + forming.waitMs
        if (now < due) {
          // Under strideS the next tick looks again; otherwise one timer.
          if (!this.striding && this.waitTimer === undefined) this.waitTimer = setTimeout(this.waitTask, due - now)
          break
        }
      }
      this.dispatch(bucket, limit)
    }
    if (this.queued === 0 && this.strideTimer !== undefined) {
      clearInterval(this.strideTimer)
      this.strideTimer = undefined
    }
  }

  /** Full buckets first: a full batch starts at once. Among equals, the one whose head waited longest. */
  private nextBucket(limit: number): Bucket<T, R> {
    // Without batchKey there is one bucket: no need to walk the Map.
    if (this.buckets.size === 1) return this.unkeyed
    let best: Bucket<T, R> | undefined
    let bestFull = false
    for (const bucket of this.buckets.values()) {
      if (bucket.count === 0) continue
      const full = holdsFullBatch(bucket, limit)
      if (!best || (full && !bestFull) || (full === bestFull && bucket.head!.sequence < best.head!.sequence)) {
        best = bucket
        bestFull = full
      }
    }
    return best!
  }

  private stopForming(): void {
    this.forming = undefined
    if (this.waitTimer !== undefined) {
      clearTimeout(this.waitTimer)
      this.waitTimer = undefined
    }
  }

  /** Start the oldest batch of a bucket, made to hold at most `limit` units. */
  private dispatch(bucket: Bucket<T, R>, limit: number): void {
    this.stopForming()
    const batch = this.shapeHead(bucket, limit)
    if (batch.live === 0) return
    batch.running = true
    this.queued -= batch.live
    this.itemsRun += batch.live
    this.inFlight++
    this.updateStartBlocked()
    this.batchesRun++
    noteBatchStarted()
    if (this.observed !== undefined) this.observeStart(batch)
    // A batch serves many calls, so its handler runs in the batch's own
    // context (its model id, if any), never in the context of whichever
    // request's code happened to start it: the pump's macrotask carries the
    // context it was scheduled from, which can be any earlier request's.
    const modelId = batch.multiplexedModelId
    const run = runWithContext(modelId === undefined ? NO_MODEL : { origin: 'batch', multiplexedModelId: modelId }, this.runner, batch)
    run.then(
      () => this.finish(batch),
      (error: unknown) => this.finish(batch, error),
    )
  }

  /**
   * The bucket's oldest batch, out of the bucket and ready to run. Usually
   * it is taken as it is. It is reshaped only when calls left it while
   * queued (they are dropped, and later calls fill the room), or when
   * maxBatchSize changed while it waited (it gives its overflow back, or
   * takes calls from the batch behind it).
   */
  private shapeHead(bucket: Bucket<T, R>, limit: number): Batch<T, R> {
    let batch = bucket.head!
    if (batch.gone > 0) batch.compact()
    if (batch.units > limit) {
      // Larger than a batch may now be: the front part runs, the rest waits.
      const front = new Batch<T, R>(this, batch.place, batch.sequence)
      this.move(batch, front, limit)
      if (batch.live === 0) this.unlink(bucket, batch)
      return front
    }
    this.unlink(bucket, batch)
    for (let next = bucket.head; next !== undefined && batch.units < limit; next = bucket.head) {
      const moved = this.move(next, batch, limit - batch.units)
      if (next.live === 0) this.unlink(bucket, next)
      if (moved === 0) break
    }
    return batch
  }

  join(batch: Batch<T, R>, freeUnits: number): number {
    if (batch.released) return 0
    const bucket = this.buckets.get((batch.place as Bucket<T, R>).mapKey)
    if (!bucket) return 0
    let joined = 0
    for (let from = bucket.head; from !== undefined && freeUnits > 0; from = bucket.head) {
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
    const { maxBatchSize } = this
    const { entries } = from
    let units = 0
    let moved = 0
    let index = 0
    for (; index < entries.length; index++) {
      const entry = entries[index]!
      if (entry.settled) continue
      if (entry.size > maxUnits && entry.size > maxBatchSize) {
        entry.fail(this.tooLarge(entry.size, maxBatchSize))
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
      if (this.queued === 0) this.stopForming()
    }
    return moved
  }

  private observeStart(batch: Batch<T, R>): void {
    const now = performance.now()
    batch.startedAt = now
    let units = 0
    for (const entry of batch.entries) {
      units += entry.size
      // Entries admitted before the observer was attached have no start time.
      if (entry.enqueuedAt === 0) continue
      this.observed!.dequeued(now - entry.enqueuedAt)
      batch.waitMs = Math.max(batch.waitMs, now - entry.enqueuedAt)
    }
    this.observed!.batchStarted(batch.entries.length, units, batch.waitMs)
  }

  private finish(batch: Batch<T, R>, error?: unknown): void {
    // A runner must settle every entry; if it did not, fail the rest here so
    // that every admitted call still settles exactly once.
    if (batch.live > 0) {
      const reason = error ?? new Error('the batch ended without a result for this item')
      for (const entry of batch.entries) entry.fail(reason)
    }
    this.release(batch)
  }

  release(batch: Batch<T, R>): void {
    if (batch.released) return
    batch.released = true
    // A batch is done for its callers once the last of them has its answer.
    if (this.observed !== undefined && batch.startedAt > 0) {
      this.observed.batchFinished(batch.entries.length, batch.waitMs, performance.now() - batch.startedAt)
    }
    this.inFlight--
    this.updateStartBlocked()
    if (this.queued > 0) this.schedule()
  }
}
