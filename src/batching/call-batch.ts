import { RequestCancelledError } from '../errors.js'
import type { Entry, EntryBatch } from './entry.js'
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

/** The queue a batch belongs to, as the batch and its runner see it. */
export interface BatchQueueOf<T, R> {
  readonly options: ResolvedBatchOptions<T>
  /** Undo what tied a settled entry to the queue: its place in `batch`, or its share of it running, its signal, its deadline. */
  detach(entry: Entry<T, R>, batch: Batch<T, R>): void
  /** Continuous batching: move waiting calls into a running batch, up to `freeUnits`; how many joined. */
  join(batch: Batch<T, R>, freeUnits: number): number
}

/**
 * A batch: first waiting in the queue, calls joining it as they are
 * admitted, then handed to a runner as a whole. Calls are added to the batch
 * they will run in when they arrive, as DataLoader does, so starting a batch
 * costs nothing per call; only a call that leaves while queued, or a size
 * changed by a setter, makes the queue move calls between batches.
 */
export class Batch<T, R> implements BatchInfo, EntryBatch<T, R> {
  readonly entries: Entry<T, R>[]
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
  /** For observers: when the batch started, and how long its oldest call waited. */
  startedAt = 0
  waitMs = 0
  private controller: AbortController | undefined = undefined

  constructor(
    readonly queue: BatchQueueOf<T, R>,
    /** The bucket of the queue the batch was begun in: calls of one batchKey and one model id. */
    readonly place: BatchPlace,
    /** Order in which batches were begun: among buckets, the one whose batch began first goes first. */
    readonly sequence: number,
    /** The call that begins it, if any. */
    first?: Entry<T, R>,
  ) {
    // A batch begun by a call starts with it in its array rather than with an
    // empty one: an empty array is first an array of numbers and is converted
    // when the first call goes in, and every later call added to any batch
    // then took a slower path, about a tenth of the engine's own time a call.
    this.entries = first === undefined ? [] : [first]
    if (first !== undefined) this.joined(first)
  }

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
    this.entries.push(entry)
    this.joined(entry)
  }

  private joined(entry: Entry<T, R>): void {
    entry.batch = this
    this.items.push(entry.item)
    this.units += entry.size
  }

  detach(entry: Entry<T, R>): void {
    this.queue.detach(entry, this)
  }

  /** Hand a handler's results out, in order: caller i gets result i, or fails with it if it is an Error. */
  handOut(entries: readonly Entry<T, R>[], results: ReadonlyArray<R | Error>): void {
    for (let i = 0; i < entries.length; i++) {
      const result = results[i]!
      entries[i]!.settle(result instanceof Error ? { ok: false, error: result } : { ok: true, value: result })
    }
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
