import {
  BackPressureError,
  ItemTooLargeError,
  RequestCancelledError,
  RequestTimeoutError,
} from '../errors.js'
import type { CancelSignal } from './cancel-signal.js'
import { currentContext } from './context.js'
import { LinkedQueue, type Linked } from './list.js'
import { macrotask } from './macrotask.js'
import {
  describe,
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

/** What the queue tells the handler about the batch it is running. */
export interface BatchInfo {
  /** The `batchKey` every item of this batch shares (undefined without one). */
  readonly key: string | undefined
  /** Aborts once every caller of this batch has gone: the handler may stop early. */
  readonly signal: AbortSignal
  /** True while caller `i` still waits for its result. */
  isActive(index: number): boolean
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

/** How a caller receives the outcome: a promise, or a stream of partials. */
export interface Settler {
  reject(error: unknown): void
}

const QUEUED = 0
const RUNNING = 1
const SETTLED = 2

export class Entry<T, S extends Settler = Settler> implements Linked<Entry<T, S>> {
  prev: Entry<T, S> | undefined = undefined
  next: Entry<T, S> | undefined = undefined
  state = QUEUED
  batch: RunningBatch<T, S> | undefined = undefined
  bucket: Bucket<T, S> | undefined = undefined
  /** performance.now() at admission; only read when the queue is observed. */
  enqueuedAt = 0
  /** Order of admission, to find the bucket whose head waited longest. */
  sequence = 0

  constructor(
    readonly queue: BatchQueue<T, S>,
    readonly item: T,
    readonly size: number,
    readonly key: string | undefined,
    readonly signal: CancelSignal | undefined,
    readonly deadline: number | undefined,
    readonly settler: S,
  ) {}

  get settled(): boolean {
    return this.state === SETTLED
  }

  /**
   * EventListener object: the entry itself listens for its signal's abort, so
   * a call costs no extra closure.
   */
  handleEvent(): void {
    this.leave(new RequestCancelledError('the request was cancelled', { cause: this.signal?.reason }))
  }

  leave(reason: Error): void {
    this.queue.leave(this, reason)
  }
}

/** Calls that may share a batch: one per batch key, FIFO inside. */
class Bucket<T, S extends Settler> extends LinkedQueue<Entry<T, S>> {
  /** Sum of the entries' sizes (`batchSizeFn` units). */
  units = 0
  constructor(readonly key: string | undefined) {
    super()
  }
}

export class RunningBatch<T, S extends Settler> implements BatchInfo {
  /** Callers still waiting for this batch. */
  live: number
  /** Set once the concurrency slot is given back (done, or every caller gone). */
  released = false
  /** For observers: when the batch started, and how long its oldest call waited. */
  startedAt = 0
  waitMs = 0
  private controller: AbortController | undefined

  constructor(
    readonly queue: BatchQueue<T, S>,
    readonly entries: Entry<T, S>[],
    readonly key: string | undefined,
  ) {
    this.live = entries.length
  }

  get items(): T[] {
    return this.entries.map((entry) => entry.item)
  }

  // Created on first use: most handlers never look at it.
  get signal(): AbortSignal {
    this.controller ??= new AbortController()
    return this.controller.signal
  }

  isActive(index: number): boolean {
    const entry = this.entries[index]
    return entry !== undefined && !entry.settled
  }

  abort(): void {
    this.controller ??= new AbortController()
    this.controller.abort(new RequestCancelledError('every caller of this batch has gone'))
  }
}

/** Runs one batch; resolves when it is done with every entry. */
export type BatchRunner<T, S extends Settler> = (batch: RunningBatch<T, S>) => Promise<void>

/**
 * The batch queue: gathers single calls and hands them to a runner in
 * batches, following the batching rules of docs/architecture.md.
 *
 * Scheduling is one `pump()` that asks "may a batch start now?" and is
 * triggered by arrivals (one macrotask per burst, so calls that arrive in
 * the same round of I/O share a batch), by finished batches, and by the
 * single wait timer, or,
 * with `strideS`, only by the stride ticker. No timer exists per item: the
 * deadline sweeper arms one timer for the earliest deadline.
 */
export class BatchQueue<T, S extends Settler> {
  private readonly buckets = new Map<string | undefined, Bucket<T, S>>()
  private queued = 0
  private admitted = 0
  private inFlight = 0
  private batchesRun = 0
  private itemsRun = 0

  private pumpScheduled = false
  private readonly pumpTask = (): void => this.pump()
  private fullPumpScheduled = false
  private readonly fullPumpTask = (): void => {
    this.fullPumpScheduled = false
    this.pump()
  }
  private readonly waitTask = (): void => {
    this.waitTimer = undefined
    this.pump()
  }
  /** When formation of the next batch began (rule 3), for batchWaitTimeoutS. */
  private formingSince: number | undefined = undefined
  private waitTimer: ReturnType<typeof setTimeout> | undefined = undefined
  private strideTimer: ReturnType<typeof setInterval> | undefined = undefined

  /** Set by a runtime that exports metrics; see QueueObserver. */
  observer: QueueObserver | undefined = undefined

  private readonly withDeadline = new Set<Entry<T, S>>()
  private deadlineTimer: ReturnType<typeof setTimeout> | undefined = undefined
  private deadlineTimerAt = Infinity
  private readonly sweepTask = (): void => this.sweepDeadlines()

  constructor(
    readonly options: ResolvedBatchOptions<T>,
    private readonly runner: BatchRunner<T, S>,
  ) {}

  /** Admit one call, or settle it at once with the reason it cannot wait. */
  enqueue(item: T, callOptions: CallOptions | undefined, settler: S): Entry<T, S> | undefined {
    const ambient = currentContext()
    const signal = callOptions?.signal ?? ambient?.signal
    const deadline = callOptions?.deadline ?? ambient?.deadline
    if (signal?.aborted) {
      settler.reject(new RequestCancelledError('the request was cancelled before it was queued', { cause: signal.reason }))
      return undefined
    }
    if (deadline !== undefined && deadline <= Date.now()) {
      settler.reject(new RequestTimeoutError('the request deadline passed before it was queued'))
      return undefined
    }
    const { maxQueuedRequests, batchKey, batchSizeFn } = this.options
    if (this.queued >= maxQueuedRequests) {
      settler.reject(
        new BackPressureError(
          `the batch queue is full: ${this.queued} requests are waiting (maxQueuedRequests: ${maxQueuedRequests}); retry later`,
        ),
      )
      return undefined
    }
    let size = 1
    let key: string | undefined
    try {
      if (batchSizeFn) size = this.sizeOf(item, batchSizeFn)
      if (batchKey) key = this.keyOf(item, batchKey, callOptions?.context ?? ambient ?? {})
    } catch (error) {
      settler.reject(error)
      return undefined
    }

    const entry = new Entry<T, S>(this, item, size, key, signal, deadline, settler)
    entry.sequence = this.admitted++
    if (this.observer) entry.enqueuedAt = performance.now()
    let bucket = this.buckets.get(key)
    if (!bucket) {
      bucket = new Bucket<T, S>(key)
      this.buckets.set(key, bucket)
    }
    entry.bucket = bucket
    bucket.push(entry)
    bucket.units += size
    this.queued++
    signal?.addEventListener('abort', entry, { once: true })
    if (deadline !== undefined) this.trackDeadline(entry, deadline)
    this.schedule(bucket)
    return entry
  }

  private sizeOf(item: T, batchSizeFn: (item: T) => number): number {
    const size = batchSizeFn(item)
    if (typeof size !== 'number' || !Number.isFinite(size) || size <= 0) {
      throw new TypeError(`batchSizeFn must return a finite number greater than 0, returned ${describe(size)}`)
    }
    if (size > this.options.maxBatchSize) throw this.tooLarge(size)
    return size
  }

  private tooLarge(size: number): ItemTooLargeError {
    return new ItemTooLargeError(
      `this item has size ${size} but a batch holds at most ${this.options.maxBatchSize} (maxBatchSize); ` +
        'split the item or raise maxBatchSize',
    )
  }

  private keyOf(item: T, batchKey: (item: T, context: CallContext) => string, context: CallContext): string {
    const key = batchKey(item, context)
    if (typeof key !== 'string') {
      throw new TypeError(`batchKey must return a string, returned ${describe(key)}`)
    }
    return key
  }

  /** A caller gives up (abort or deadline): leave the queue, or leave its running batch. */
  leave(entry: Entry<T, S>, reason: Error): void {
    if (entry.state === SETTLED) return
    if (entry.state === QUEUED) {
      const bucket = entry.bucket!
      bucket.remove(entry)
      bucket.units -= entry.size
      if (bucket.count === 0) this.buckets.delete(bucket.key)
      this.queued--
      if (this.queued === 0) this.stopForming()
    }
    // The last caller of a running batch leaving means nobody waits for it:
    // tell the handler (it may stop early); settle() gives the slot back, so
    // a hung handler cannot stall the queue forever.
    if (entry.batch?.live === 1) entry.batch.abort()
    this.settle(entry)
    entry.settler.reject(reason)
  }

  /**
   * Mark an entry settled and drop what tied it to the queue; the caller then
   * delivers the outcome. The last settled entry of a batch frees its slot at
   * once, without waiting for the runner to unwind.
   */
  settle(entry: Entry<T, S>): void {
    if (entry.state === RUNNING) {
      const batch = entry.batch!
      if (--batch.live === 0) this.release(batch)
    }
    entry.state = SETTLED
    entry.signal?.removeEventListener('abort', entry)
    if (entry.deadline !== undefined) this.withDeadline.delete(entry)
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
    this.options.maxBatchSize = getValidPositiveInteger('maxBatchSize', value)
    this.schedule()
  }

  setBatchWaitTimeoutS(value: unknown): void {
    this.options.batchWaitTimeoutS = getValidSeconds('batchWaitTimeoutS', value)
    this.schedule()
  }

  // --- scheduling -----------------------------------------------------------

  /** `changed`: the one bucket an arrival added to, when that is all that changed. */
  private schedule(changed?: Bucket<T, S>): void {
    if (this.options.strideS > 0) {
      this.strideTimer ??= setInterval(this.pumpTask, this.options.strideS * 1000)
      return
    }
    // A full batch has nothing to wait for (rule 4): start it on a microtask.
    // A partial one waits for the end of this round of I/O, so that requests
    // that arrived together share it (see macrotask.ts).
    const full = changed ? changed.units >= this.options.maxBatchSize && this.inFlight < this.options.maxConcurrentBatches : this.hasFullBatch()
    if (full) {
      if (this.fullPumpScheduled) return
      this.fullPumpScheduled = true
      queueMicrotask(this.fullPumpTask)
      return
    }
    if (this.pumpScheduled) return
    this.pumpScheduled = true
    macrotask(this.pumpTask)
  }

  private hasFullBatch(): boolean {
    if (this.inFlight >= this.options.maxConcurrentBatches) return false
    for (const bucket of this.buckets.values()) if (bucket.units >= this.options.maxBatchSize) return true
    return false
  }

  private pump(): void {
    this.pumpScheduled = false
    const { maxConcurrentBatches, maxBatchSize, allowSmallBatch, strideS } = this.options
    const waitMs = this.options.batchWaitTimeoutS * 1000
    while (this.inFlight < maxConcurrentBatches && this.queued > 0) {
      const bucket = this.nextBucket()
      if (bucket.units < maxBatchSize) {
        if (!allowSmallBatch) break
        if (waitMs > 0) {
          const now = Date.now()
          this.formingSince ??= now
          const due = this.formingSince + waitMs
          if (now < due) {
            // Under strideS the next tick looks again; otherwise one timer.
            if (strideS === 0 && this.waitTimer === undefined) this.waitTimer = setTimeout(this.waitTask, due - now)
            break
          }
        }
      }
      this.dispatch(bucket)
    }
    if (this.queued === 0 && this.strideTimer !== undefined) {
      clearInterval(this.strideTimer)
      this.strideTimer = undefined
    }
  }

  /** Full buckets first (rule 4); among equals, the one whose head waited longest. */
  private nextBucket(): Bucket<T, S> {
    const { maxBatchSize } = this.options
    let best: Bucket<T, S> | undefined
    let bestFull = false
    for (const bucket of this.buckets.values()) {
      const full = bucket.units >= maxBatchSize
      if (!best || (full && !bestFull) || (full === bestFull && bucket.head!.sequence < best.head!.sequence)) {
        best = bucket
        bestFull = full
      }
    }
    return best!
  }

  private stopForming(): void {
    this.formingSince = undefined
    if (this.waitTimer !== undefined) {
      clearTimeout(this.waitTimer)
      this.waitTimer = undefined
    }
  }

  /** Take the head run of a bucket that fits in one batch and start it. */
  private dispatch(bucket: Bucket<T, S>): void {
    this.stopForming()
    const entries: Entry<T, S>[] = []
    this.take(bucket, this.options.maxBatchSize, entries)
    if (entries.length === 0) return
    const batch = new RunningBatch(this, entries, bucket.key)
    for (const entry of entries) entry.batch = batch
    this.inFlight++
    this.batchesRun++
    if (this.observer) this.observeStart(batch)
    this.runner(batch).then(
      () => this.finish(batch),
      (error: unknown) => this.finish(batch, error),
    )
  }

  /**
   * Continuous batching: move waiting calls with the batch's key into a
   * running batch, up to `freeUnits`. Returns how many joined.
   */
  join(batch: RunningBatch<T, S>, freeUnits: number): number {
    const bucket = this.buckets.get(batch.key)
    if (!bucket || batch.released) return 0
    const before = batch.entries.length
    this.take(bucket, freeUnits, batch.entries)
    for (let i = before; i < batch.entries.length; i++) batch.entries[i]!.batch = batch
    batch.live += batch.entries.length - before
    if (this.queued === 0) this.stopForming()
    return batch.entries.length - before
  }

  /** Move the head run of `bucket` that fits in `maxUnits` into `into`, in order. */
  private take(bucket: Bucket<T, S>, maxUnits: number, into: Entry<T, S>[]): void {
    const { maxBatchSize } = this.options
    let units = 0
    for (let entry = bucket.head; entry; entry = bucket.head) {
      if (entry.size > maxBatchSize) {
        // Admitted under a larger maxBatchSize that has since been lowered.
        this.leave(entry, this.tooLarge(entry.size))
        continue
      }
      if (units + entry.size > maxUnits) break
      units += entry.size
      bucket.remove(entry)
      bucket.units -= entry.size
      this.queued--
      entry.state = RUNNING
      into.push(entry)
      this.itemsRun++
      if (this.observer && entry.enqueuedAt > 0) this.observer.dequeued(performance.now() - entry.enqueuedAt)
    }
    if (bucket.count === 0) this.buckets.delete(bucket.key)
  }

  private observeStart(batch: RunningBatch<T, S>): void {
    const now = performance.now()
    batch.startedAt = now
    let units = 0
    for (const entry of batch.entries) {
      units += entry.size
      // Entries admitted before the observer was attached have no start time.
      if (entry.enqueuedAt > 0) batch.waitMs = Math.max(batch.waitMs, now - entry.enqueuedAt)
    }
    this.observer!.batchStarted(batch.entries.length, units, batch.waitMs)
  }

  private finish(batch: RunningBatch<T, S>, error?: unknown): void {
    // A runner must settle every entry; if it failed to, fail them here so
    // that every accepted call still settles exactly once (rule 9).
    for (const entry of batch.entries) {
      if (entry.settled) continue
      this.settle(entry)
      entry.settler.reject(error ?? new Error('the batch ended without a result for this item'))
    }
    this.release(batch)
  }

  private release(batch: RunningBatch<T, S>): void {
    if (batch.released) return
    batch.released = true
    // A batch is done for its callers once the last of them has its answer.
    if (this.observer && batch.startedAt > 0) {
      this.observer.batchFinished(batch.entries.length, batch.waitMs, performance.now() - batch.startedAt)
    }
    this.inFlight--
    if (this.queued > 0) this.schedule()
  }

  // --- deadlines ------------------------------------------------------------

  private trackDeadline(entry: Entry<T, S>, deadline: number): void {
    this.withDeadline.add(entry)
    if (deadline < this.deadlineTimerAt) this.armDeadlineTimer(deadline)
  }

  private armDeadlineTimer(at: number): void {
    if (this.deadlineTimer !== undefined) clearTimeout(this.deadlineTimer)
    this.deadlineTimerAt = at
    this.deadlineTimer = setTimeout(this.sweepTask, Math.max(0, at - Date.now()))
  }

  private sweepDeadlines(): void {
    this.deadlineTimer = undefined
    this.deadlineTimerAt = Infinity
    const now = Date.now()
    let next = Infinity
    for (const entry of this.withDeadline) {
      const deadline = entry.deadline!
      if (deadline <= now) this.leave(entry, new RequestTimeoutError())
      else if (deadline < next) next = deadline
    }
    if (next !== Infinity) this.armDeadlineTimer(next)
  }
}
