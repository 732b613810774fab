import type { CancelSignal } from './cancel-signal.js'
import type { DeadlineWatch } from './deadlines.js'
import { cancellation, RequestCancelledError } from '../errors.js'
import type { Linked } from './list.js'
import type { ResolvedBatchOptions } from './options.js'

/** What the queue tells the handler about the batch it is running. */
export interface BatchInfo {
  /** The `batchKey` every item of this batch shares (undefined without one). */
  readonly key: string | undefined
  /** The multiplexed model id every item of this batch was called for (undefined without one). */
  readonly multiplexedModelId: string | undefined
  /** Aborts once every caller of this batch has gone: the handler may stop early. */
  readonly signal: AbortSignal
  /** True while caller `i` still waits for its result. */
  isActive(index: number): boolean
}

/** Which calls a batch gathers: those of one `batchKey` and one multiplexed model id. */
export interface BatchPlace {
  readonly key: string | undefined
  readonly modelId: string | undefined
}

/** The queue an entry belongs to, as its batch sees it. */
export interface EntryQueue<T, R> {
  readonly options: ResolvedBatchOptions<T>
  /** Calls watched for an abort or a deadline that have not settled. */
  readonly watchedCalls: number
  /**
   * Undo what tied an entry that has just settled to the queue: its place
   * in `batch` while it waited, or its share of it running (the last one
   * gives the batch's slot back), its abort listener, its deadline.
   */
  detach(entry: Entry<T, R>, batch: Batch<T, R>): void
  /** Stop listening for a settled call's abort and watching its deadline. */
  unwatch(entry: Entry<T, R>): void
  /** Give a running batch's concurrency slot back (once): none of its callers waits any more. */
  release(batch: Batch<T, R>): void
  /** Continuous batching: move waiting calls into a running batch, up to `freeUnits`; how many joined. */
  join(batch: Batch<T, R>, freeUnits: number): number
}

/** Where a streaming call's partials go: its caller's iterator. */
export interface PartialsChannel<R> {
  push(value: R): void
  end(): void
  reject(error: unknown): void
}

/**
 * One admitted call. It settles itself: a runner calls `resolve()` (a
 * promise call), `push()` and `end()` (a streaming call) or `fail()`, and
 * the entry tells its queue what to undo. Every outcome method is a no-op
 * once the entry has settled, so a caller that left, a deadline that passed
 * and a late handler result cannot answer twice.
 *
 * An entry is made for every call, so it is kept small: one class serves
 * both kinds of call (V8 builds an instance of a subclass whose base declares
 * fields markedly slower), what a call shares with its batch (its queue, its
 * batch key) is read from the batch, and what only some calls carry is in
 * its `EntryExtras`, made on first need.
 */
export class Entry<T, R> {
  /**
   * The batch it waits in, then runs in: set when the queue admits the call,
   * cleared when it settles. A settled call holds no batch, and needs no
   * field of its own to say it has settled.
   */
  batch: Batch<T, R> | undefined = undefined
  /**
   * A promise call's resolve and reject (see `promise()`). Undefined until
   * then, not a placeholder function: a field that starts out holding one
   * function and is then given another makes V8 check and generalize it on
   * every entry: some 20 to 30 machine instructions of about 1,200 a call
   * in the engine bench (bench/engine-instructions.ts).
   */
  private resolveCall: ((value: R) => void) | undefined = undefined
  private rejectCall: ((error: unknown) => void) | undefined = undefined
  /** What this call carries beyond a plain call's item and promise; see `extra()`. */
  private extras: EntryExtras<Entry<T, R>, R> | undefined = undefined

  constructor(readonly item: T) {}

  /** It has its answer (or was refused): no batch holds it. */
  get settled(): boolean {
    return this.batch === undefined
  }

  /** `batchSizeFn` units; 1 without one. */
  get size(): number {
    return this.extras === undefined ? 1 : this.extras.size
  }

  /** The signal it listens to for an abort, if any. */
  get signal(): CancelSignal | undefined {
    return this.extras?.signal
  }

  /** Its place on the queue's deadline timer, while it has a deadline and has not settled. */
  get deadlineWatch(): DeadlineWatch<Entry<T, R>> | undefined {
    return this.extras?.deadlineWatch
  }

  /** performance.now() at admission; 0 unless the queue was observed then. */
  get enqueuedAt(): number {
    return this.extras === undefined ? 0 : this.extras.enqueuedAt
  }

  /** Its extras, to set one: made now if it has none. */
  extra(): EntryExtras<Entry<T, R>, R> {
    return (this.extras ??= new EntryExtras())
  }

  /** Make this a promise call: the caller's promise. Call once, before the entry is enqueued. */
  promise(): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.resolveCall = resolve
      this.rejectCall = reject
    })
  }

  /** Make this a streaming call whose partials go to `channel`. Call before the entry is enqueued. */
  streamTo(channel: PartialsChannel<R>): void {
    this.extra().channel = channel
  }

  /** A promise call's result. */
  resolve(value: R): void {
    if (this.close()) this.resolveCall!(value)
  }

  /**
   * A promise call's result, one of a batch's results handed out in a loop.
   * As `resolve()`, except that it leaves the batch's slot to the loop, which
   * gives it back once, after its last result (`Batch.handOut()`): per
   * call, the loop does no more than settle the call.
   */
  deliver(value: R): void {
    const batch = this.batch
    if (batch === undefined) return
    this.batch = undefined
    batch.gone++
    batch.queue.unwatch(this)
    this.resolveCall!(value)
  }

  /**
   * As `deliver()`, for a call with nothing to undo: none of its batch's
   * callers has gone and nothing watches them for an abort or a deadline,
   * so the loop settles the batch's live count once, after its last result.
   */
  deliverUnwatched(value: R): void {
    this.batch = undefined
    this.resolveCall!(value)
  }

  /** One more partial of a streaming call; its stream stays open. */
  push(value: R): void {
    if (!this.settled) this.extras!.channel!.push(value)
  }

  /** A streaming call's stream ends normally. */
  end(): void {
    if (this.close()) this.extras!.channel!.end()
  }

  /** Settle with an error: the handler's, or the reason the call cannot go on. */
  fail(error: unknown): void {
    if (this.close()) this.rejectCaller(error)
  }

  /** Refused on admission: it was never queued (it holds no batch), so there is nothing to undo. */
  refuse(error: unknown): void {
    this.rejectCaller(error)
  }

  /** The caller gives up (abort, deadline, a stream's reader leaving): leave the queue or the running batch. */
  leave(reason: Error): void {
    const batch = this.batch
    if (batch === undefined) return
    // The last caller of a running batch leaving means nobody waits for it:
    // tell the handler, which may stop early. Settling gives the batch's slot
    // back at once, so a hung handler cannot stall the queue.
    if (batch.running && batch.live === 1) batch.abort()
    this.fail(reason)
  }

  /** EventListener object: the entry itself listens for its signal's abort, so a call costs no closure. */
  handleEvent(): void {
    this.leave(cancellation(this.signal?.reason))
  }

  /** Mark this entry settled and detach it from the queue; false if it already was. */
  private close(): boolean {
    const batch = this.batch
    if (batch === undefined) return false
    this.batch = undefined
    batch.queue.detach(this, batch)
    return true
  }

  private rejectCaller(error: unknown): void {
    const channel = this.extras?.channel
    if (channel !== undefined) channel.reject(error)
    else this.rejectCall!(error)
  }
}

/**
 * What only some calls carry, apart from their `Entry`: a plain call (no
 * batchSizeFn, no abort signal or deadline, no observer timing it, a
 * promise rather than a stream) makes none. Node 20 has no pointer
 * compression, so each field of an object is 8 bytes: these five on every
 * entry made the engine bench's calls about 5% slower (bench/limits.md). A
 * served call, which has a client-disconnect signal, makes one.
 */
export class EntryExtras<E, R> {
  /** `batchSizeFn` units. */
  size = 1
  signal: CancelSignal | undefined = undefined
  deadlineWatch: DeadlineWatch<E> | undefined = undefined
  /** performance.now() at admission; only set while the queue is observed. */
  enqueuedAt = 0
  /** A streaming call's iterator (see `Entry.streamTo()`). */
  channel: PartialsChannel<R> | undefined = undefined
}

/** Settle with `error` every entry that has not settled yet. */
export function failUnsettled<T, R>(entries: readonly Entry<T, R>[], error: unknown): void {
  for (const entry of entries) entry.fail(error)
}

/**
 * An empty array whose elements are already of the kind an entry needs (any
 * object), which `slice()` copies: a batch's entries begun as `[]` would
 * start as small integers and change kind at the first push, and every push
 * then checks for both kinds.
 */
const NO_ENTRIES: unknown[] = [undefined]
NO_ENTRIES.pop()

/**
 * A batch: first waiting in the queue, calls joining it as they are
 * admitted, then handed to a runner as a whole. Calls are added to the batch
 * they will run in when they arrive, as DataLoader does, so starting a batch
 * costs nothing per call; only a call that leaves while queued, or a size
 * changed by a setter, makes the queue move calls between batches.
 */
export class Batch<T, R> implements BatchInfo, Linked<Batch<T, R>> {
  readonly entries: Entry<T, R>[] = NO_ENTRIES.slice() as Entry<T, R>[]
  /** The entries' items, in the same order: what the handler receives. */
  readonly items: T[] = []
  /** `batchSizeFn` units of its calls (while it waits, of those still waiting). */
  units = 0
  /**
   * Entries that have settled (or, while the queue moves calls between
   * batches, left): `live` is what remains. Counted from this side so that
   * a call joining a batch counts nothing: the entries array's length already
   * does.
   */
  gone = 0
  /** In its bucket, waiting to start. */
  waiting = false
  /** Handed to the runner. */
  running = false
  /** Set once the concurrency slot is given back (done, or every caller gone). */
  released = false
  /** For observers: when the batch started, and how long its oldest call waited. */
  startedAt = 0
  waitMs = 0
  /** Links in its bucket of waiting batches. */
  prev: Batch<T, R> | undefined = undefined
  next: Batch<T, R> | undefined = undefined
  private controller: AbortController | undefined = undefined

  constructor(
    readonly queue: EntryQueue<T, R>,
    /** The bucket of the queue the batch was begun in: calls of one batchKey and one model id. */
    readonly place: BatchPlace,
    /** Order in which batches were begun: among buckets, the one whose batch began first goes first. */
    readonly sequence: number,
  ) {}

  /** Entries that have not settled: callers still waiting. */
  get live(): number {
    return this.entries.length - this.gone
  }

  get key(): string | undefined {
    return this.place.key
  }

  get multiplexedModelId(): string | undefined {
    return this.place.modelId
  }

  add(entry: Entry<T, R>): void {
    entry.batch = this
    this.entries.push(entry)
    this.items.push(entry.item)
    this.units += entry.size
  }

  /**
   * Hand a handler's results out, in order: caller i gets result i, or fails
   * with it if it is an Error. Then the batch's slot is free.
   *
   * In the common batch, every caller still waits and none is watched for an
   * abort or a deadline (no signal, no deadline, no request around the call).
   * Then no caller can leave while the results are handed out, and a result
   * needs no settled check, no live count and no watch undone: about 25
   * machine instructions a call fewer in the engine bench
   * (bench/engine-instructions.ts).
   */
  handOut(entries: readonly Entry<T, R>[], results: ReadonlyArray<R | Error>): void {
    const unwatched = entries === this.entries && this.gone === 0 && this.queue.watchedCalls === 0
    let i = 0
    for (; i < entries.length; i++) {
      const result = results[i]!
      if (result instanceof Error) entries[i]!.fail(result)
      else if (unwatched) entries[i]!.deliverUnwatched(result)
      else entries[i]!.deliver(result)
    }
    // Every entry has settled: `i` is their count, read here rather than the
    // entries' length, which V8 would then keep tagged in the loop as well.
    if (unwatched) this.gone = i
    // Once no caller waits, the batch's slot is free. After a re-run of part
    // of the batch (onBatchError: 'isolate'), the rest may still wait.
    if (this.live === 0) this.queue.release(this)
  }

  /** Drop settled entries (and their items) in place. */
  compact(): void {
    const { entries, items } = this
    let kept = 0
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!
      if (entry.settled) continue
      entries[kept] = entry
      items[kept++] = entry.item
    }
    entries.length = kept
    items.length = kept
    this.gone = 0
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

  /**
   * What the handler is told when it runs on part of this batch (a re-run of
   * some entries, the active set of a continuous step): `isActive(i)`
   * indexes that part.
   */
  infoFor(entries: readonly Entry<T, R>[]): BatchInfo {
    if (entries === this.entries) return this
    const batch = this
    return {
      key: this.key,
      multiplexedModelId: this.multiplexedModelId,
      get signal() {
        return batch.signal
      },
      isActive: (index) => {
        const entry = entries[index]
        return entry !== undefined && !entry.settled
      },
    }
  }
}
