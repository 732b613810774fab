import { RequestCancelledError } from '../errors.js'
import type { Linked } from './list.js'
import type { ResolvedBatchOptions } from './options.js'

/** What the queue tells the handler about the batch it is running. */
export interface BatchInfo {
  /** The `batchKey` every item of this batch shares (undefined without one). */
  readonly key: string | undefined
  /** Aborts once every caller of this batch has gone: the handler may stop early. */
  readonly signal: AbortSignal
  /** True while caller `i` still waits for its result. */
  isActive(index: number): boolean
}

/** Where an entry is in its life: waiting in the queue, in a running batch, or answered. */
export const QUEUED = 0
export const RUNNING = 1
export const SETTLED = 2

/** The queue an entry belongs to, as the entry and its batch see it. */
export interface EntryQueue<T> {
  readonly options: ResolvedBatchOptions<T>
  /**
   * Undo what ties a settling entry to the queue: its place in the queue or
   * its share of a running batch (the last one gives the batch's slot back),
   * its abort listener, its deadline.
   */
  detach(entry: Entry<T>): void
  /** Continuous batching: move waiting calls into a running batch, up to `freeUnits`; how many joined. */
  join(batch: RunningBatch<T, Entry<T>>, freeUnits: number): number
}

/**
 * One admitted call. It settles itself: a runner calls `fail()` or its
 * kind's own outcome method (`resolve()` for a promise, `push()` and `end()`
 * for a stream), and the entry tells its queue what to undo. Every outcome
 * method is a no-op once the entry has settled, so a caller that left, a
 * deadline that passed and a late handler result cannot answer twice.
 */
export abstract class Entry<T> implements Linked<Entry<T>> {
  prev: this | undefined = undefined
  next: this | undefined = undefined
  state = QUEUED
  batch: RunningBatch<T, Entry<T>> | undefined = undefined
  /** Filled in when the queue admits the call. */
  size = 1
  key: string | undefined = undefined
  signal: AbortSignal | undefined = undefined
  deadline: number | undefined = undefined
  /** performance.now() at admission; only set while the queue is observed. */
  enqueuedAt = 0
  /** Order of admission, to find the bucket whose head waited longest. */
  sequence = 0

  constructor(
    readonly queue: EntryQueue<T>,
    readonly item: T,
  ) {}

  get settled(): boolean {
    return this.state === SETTLED
  }

  /** Settle with an error: the handler's, or the reason the call cannot go on. */
  fail(error: unknown): void {
    if (this.close()) this.rejectCaller(error)
  }

  /** Refused on admission: it was never queued, so there is nothing to undo. */
  refuse(error: unknown): void {
    this.state = SETTLED
    this.rejectCaller(error)
  }

  /** The caller gives up (abort, deadline, a stream's reader leaving): leave the queue or the running batch. */
  leave(reason: Error): void {
    if (this.state === SETTLED) return
    // The last caller of a running batch leaving means nobody waits for it:
    // tell the handler, which may stop early. Settling gives the batch's slot
    // back at once, so a hung handler cannot stall the queue.
    if (this.state === RUNNING && this.batch!.live === 1) this.batch!.abort()
    this.fail(reason)
  }

  /** EventListener object: the entry itself listens for its signal's abort, so a call costs no closure. */
  handleEvent(): void {
    this.leave(new RequestCancelledError('the request was cancelled', { cause: this.signal?.reason }))
  }

  /** Mark this entry settled and detach it from the queue; false if it already was. */
  protected close(): boolean {
    if (this.state === SETTLED) return false
    this.queue.detach(this)
    return true
  }

  /** Hand the caller its error (reject its promise, fail its stream). */
  protected abstract rejectCaller(error: unknown): void
}

/** Settle with `error` every entry that has not settled yet. */
export function failUnsettled<T>(entries: readonly Entry<T>[], error: unknown): void {
  for (const entry of entries) entry.fail(error)
}

/** A batch handed to a runner: its entries, their items in the same order, and what the handler may ask. */
export class RunningBatch<T, E extends Entry<T>> implements BatchInfo {
  readonly entries: E[] = []
  readonly items: T[] = []
  /** Callers still waiting for this batch. */
  live = 0
  /** Set once the concurrency slot is given back (done, or every caller gone). */
  released = false
  /** For observers: when the batch started, and how long its oldest call waited. */
  startedAt = 0
  waitMs = 0
  private controller: AbortController | undefined = undefined

  constructor(
    readonly queue: EntryQueue<T>,
    readonly key: string | undefined,
  ) {}

  add(entry: E): void {
    entry.state = RUNNING
    entry.batch = this
    this.entries.push(entry)
    this.items.push(entry.item)
    this.live++
  }

  /** Drop settled entries (and their items) in place, so a loop that never idles does not grow. */
  dropSettled(): void {
    let kept = 0
    for (let i = 0; i < this.entries.length; i++) {
      const entry = this.entries[i]!
      if (entry.state === SETTLED) continue
      this.entries[kept] = entry
      this.items[kept++] = entry.item
    }
    this.entries.length = kept
    this.items.length = kept
  }

  // Created on first use: most handlers never look at it.
  get signal(): AbortSignal {
    this.controller ??= new AbortController()
    return this.controller.signal
  }

  isActive(index: number): boolean {
    const entry = this.entries[index]
    return entry !== undefined && entry.state !== SETTLED
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
  infoFor(entries: readonly E[]): BatchInfo {
    if (entries === this.entries) return this
    const batch = this
    return {
      key: this.key,
      get signal() {
        return batch.signal
      },
      isActive: (index) => {
        const entry = entries[index]
        return entry !== undefined && entry.state !== SETTLED
      },
    }
  }
}
