import { BatchHandlerError, FailedItemsError, RequestCancelledError, cancellation } from '../errors.js'
import type { CancelSignal } from './cancel-signal.js'
import { failItemsAndRerun, failUnsettled } from './item-errors.js'
import type { BatchSizeLimit, BatchSizeLimits } from './limits.js'
import type { ResolvedBatchOptions } from './options.js'

/*
 * The calls a batch queue holds: one call (`Entry`), the batch of calls it
 * runs in (`Batch`), the calls of one key waiting in their batches
 * (`Bucket`), and how a promise handler runs a batch (`promiseRunner`). The
 * API that makes batched functions is `batch.ts`.
 */

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

/** The batched method: a list in, one result (or an Error) per item out, in order. */
export type BatchHandler<T, R> = (items: T[], info: BatchInfo) => Promise<ReadonlyArray<R | Error>> | ReadonlyArray<R | Error>

/** How a call ends: with its result, or with the error that ends it. */
export type Settlement<R> = { ok: true; value: R } | { ok: false; error: unknown }

/** Runs one batch; resolves when it is done with every entry. */
export type BatchRunner<T, R> = (batch: Batch<T, R>) => Promise<void>

/** The queue a batch belongs to, as its batches, their calls and their runners see it. */
export interface BatchQueueOf<T, R> {
  readonly options: ResolvedBatchOptions<T>
  /** How large each key's next batch may be (see limits.ts). */
  readonly limits: BatchSizeLimits
  /** Undo what tied a settled call to the queue: its place in `batch`, or its share of it running, its signal, its deadline. */
  detach(entry: Entry<T, R>, batch: Batch<T, R>): void
  /** Continuous batching: move waiting calls into a running batch, up to `freeUnits`; how many joined. */
  join(batch: Batch<T, R>, freeUnits: number): number
}

/**
 * One admitted call. Whatever ends it (the handler's result or error, a
 * refusal at admission, its deadline, its caller leaving) ends it through
 * `settle()`, and only the first settle counts: a caller that left, a
 * deadline that passed and a late handler result cannot answer twice.
 */
export class Entry<T, R> {
  /** The batch it waits in, then runs in; undefined before it is queued and after it settles. */
  batch: Batch<T, R> | undefined = undefined
  settled = false
  /** `batchSizeFn` units; 1 without one. */
  size = 1
  /** The signal it listens to for an abort, if any. */
  signal: CancelSignal | undefined = undefined
  /** performance.now() at admission; 0 unless the queue kept metrics then. */
  enqueuedAt = 0
  /**
   * Who hears how the call ends, set before it is queued: a promise call's
   * resolvers, or a streaming call's channel (`resolve` ends the stream).
   */
  resolve!: (value: R) => void
  reject!: (error: unknown) => void

  constructor(readonly item: T) {}

  /** End the call, once: later settles do nothing. */
  settle(outcome: Settlement<R>): void {
    if (this.settled) return
    this.settled = true
    const batch = this.batch
    if (batch !== undefined) {
      this.batch = undefined
      batch.queue.detach(this, batch)
    }
    if (outcome.ok) this.resolve(outcome.value)
    else this.reject(outcome.error)
  }

  /** The caller gives up (abort, deadline, a stream's reader leaving): it leaves the queue or the running batch. */
  leave(reason: Error): void {
    const batch = this.batch
    // The last caller of a running batch leaving means nobody waits for it:
    // tell the handler, which may stop early. Settling gives the batch's slot
    // back at once, so a hung handler cannot stall the queue.
    if (batch !== undefined && batch.running && batch.live === 1) batch.abort()
    this.settle({ ok: false, error: reason })
  }

  /** The entry listens for its signal's abort itself, as an EventListener object. */
  handleEvent(): void {
    this.leave(cancellation(this.signal?.reason))
  }
}

/**
 * A batch: first waiting in the queue, calls joining it as they are
 * admitted, then handed to a runner as a whole. Calls are added to the batch
 * they will run in when they arrive, as DataLoader does, so starting a batch
 * costs nothing per call; only a call that leaves while queued, or a size
 * changed by a setter, makes the queue move calls between batches.
 */
export class Batch<T, R> implements BatchInfo {
  readonly entries: Entry<T, R>[] = []
  /** The entries' items, in the same order: what the handler receives. */
  readonly items: T[] = []
  /** `batchSizeFn` units of its calls (while it waits, of those still waiting). */
  units = 0
  /** Entries that have settled (or, while the queue moves calls between batches, left): `live` is what remains. */
  gone = 0
  /** In its bucket, waiting to start. */
  waiting = false
  /** Handed to the runner. */
  running = false
  /** Set once the concurrency slot is given back (done, or every caller gone). */
  released = false
  /** When the batch started, for metrics and the adaptive size; 0 if nothing timed it. */
  startedAt = 0
  /** It started because batchWaitTimeoutS ran out before it was full. */
  waitedOut = false
  private controller: AbortController | undefined = undefined

  constructor(
    readonly queue: BatchQueueOf<T, R>,
    /** The bucket of the queue the batch was begun in: calls of one batchKey and one model id. */
    readonly bucket: Bucket<T, R>,
    /** Order in which batches were begun: among buckets, the one whose batch began first goes first. */
    readonly sequence: number,
  ) {}

  /** Entries that have not settled: callers still waiting. */
  get live(): number {
    return this.entries.length - this.gone
  }

  get key(): string | undefined {
    return this.bucket.key
  }

  get multiplexedModelId(): string | undefined {
    return this.bucket.modelId
  }

  add(entry: Entry<T, R>): void {
    this.entries.push(entry)
    this.items.push(entry.item)
    this.units += entry.size
    entry.batch = this
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

  /** Every caller left while it ran (its signal aborted): it ended early, and its time says nothing of its cost. */
  get abandoned(): boolean {
    return this.controller?.signal.aborted === true
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
    // The batch's signal is made on first use: read through, not copied.
    const signalOfBatch = () => this.signal
    return {
      key: this.key,
      multiplexedModelId: this.multiplexedModelId,
      get signal() {
        return signalOfBatch()
      },
      isActive: (index) => {
        const entry = entries[index]
        return entry !== undefined && !entry.settled
      },
    }
  }
}

/**
 * The calls of one key that wait (a batchKey, a multiplexed model id, both,
 * or neither), in the batches they will run in, oldest first, with the
 * key's limit. A call joins the newest batch unless it would overflow it.
 */
export class Bucket<T, R> {
  readonly batches: Batch<T, R>[] = []

  constructor(
    /** Its key in the queue's Map of buckets; undefined for calls with neither a batchKey nor a model id. */
    readonly id: string | undefined,
    readonly key: string | undefined,
    readonly modelId: string | undefined,
    /** How large its next batch may be: its key's limit (see limits.ts). */
    readonly limit: BatchSizeLimit,
  ) {}

  /**
   * Whether its waiting batches hold `full` units between them (by default
   * the size at which its key's batches are full), enough for a full batch:
   * the oldest takes calls from the ones behind it when it starts.
   */
  holdsFullBatch(full = this.limit.fullBatchSize): boolean {
    let units = 0
    for (const batch of this.batches) if ((units += batch.units) >= full) return true
    return false
  }

  /** Calls waiting in it. */
  get waitingCalls(): number {
    let calls = 0
    for (const batch of this.batches) calls += batch.live
    return calls
  }
}

/**
 * Runs a batch through a promise handler and hands caller i its result i,
 * or fails it with result i if that is an Error.
 *
 * A thrown error fails every caller of the batch, or with
 * `onBatchError: 'isolate'` bisects the batch until the failing items are
 * found, so one poisonous input does not take its neighbours down with it.
 * A thrown `FailedItemsError` fails only the items it names (item-errors.ts).
 */
export function promiseRunner<T, R>(handler: BatchHandler<T, R>, isolate: boolean) {
  return async function runBatch(batch: Batch<T, R>, entries = batch.entries, items = batch.items): Promise<void> {
    let results: ReadonlyArray<R | Error>
    try {
      results = await handler(items, entries === batch.entries ? batch : batch.infoFor(entries))
    } catch (error) {
      if (error instanceof FailedItemsError) {
        return failItemsAndRerun(error, entries, (rest) =>
          runBatch(
            batch,
            rest,
            rest.map((entry) => entry.item),
          ),
        )
      }
      if (!isolate || entries.length === 1) return failUnsettled(entries, error)
      // Re-run the halves with the callers who are still waiting; a half that
      // succeeds is answered, a half that throws is split again.
      const live = entries.filter((entry) => !entry.settled)
      if (live.length === 0) return
      const middle = Math.ceil(live.length / 2)
      for (const half of live.length === 1 ? [live] : [live.slice(0, middle), live.slice(middle)]) {
        await runBatch(
          batch,
          half,
          half.map((entry) => entry.item),
        )
      }
      return
    }
    // Typed as an array, but a handler in JavaScript may return anything. Checked as unknown:
    // Array.isArray() would narrow `results` to any[], and the loop below would read any.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- see above
    if (!Array.isArray(results as unknown)) {
      const returned = results === null ? 'null' : typeof results
      return failUnsettled(entries, new BatchHandlerError(`the batched handler must return an array with one result per item, returned ${returned}`))
    }
    if (results.length !== entries.length) {
      return failUnsettled(
        entries,
        new BatchHandlerError(
          `the batched handler returned ${results.length} results for a batch of ${entries.length} items; ` +
            'it must return exactly one result (or Error) per item, in order',
        ),
      )
    }
    for (let i = 0; i < entries.length; i++) {
      const result = results[i]!
      entries[i]!.settle(result instanceof Error ? { ok: false, error: result } : { ok: true, value: result })
    }
  }
}
