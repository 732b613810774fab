import type { CancelSignal } from './cancel-signal.js'
import { cancellation } from '../errors.js'

/** How a call ends: with its result, or with the error that ends it. */
export type Settlement<R> = { ok: true; value: R } | { ok: false; error: unknown }

/**
 * Who hears of a call: a promise call's resolve and reject, or a streaming
 * call's channel (whose `resolve` ends the stream, and which also takes
 * partials).
 */
export interface Caller<R> {
  resolve(value: R): void
  reject(error: unknown): void
  push?(value: R): void
}

/** What an entry needs of the batch it waits or runs in. */
export interface EntryBatch<T, R> {
  /** Handed to the runner. */
  readonly running: boolean
  /** Its callers still waiting. */
  readonly live: number
  /** The entry has settled: undo what tied it to the batch and its queue (its place, its signal, its deadline). */
  detach(entry: Entry<T, R>): void
  /** Every caller has gone: the handler may stop early. */
  abort(): void
}

/**
 * One admitted call. Whatever ends it (the handler's result or error, a
 * refusal at admission, its deadline, its caller leaving) ends it through
 * `settle()`, and only the first settle counts: a caller that left, a
 * deadline that passed and a late handler result cannot answer twice.
 */
export class Entry<T, R> {
  /** The batch it waits in, then runs in; undefined before it is queued and after it settles. */
  batch: EntryBatch<T, R> | undefined = undefined
  settled = false
  /** `batchSizeFn` units; 1 without one. */
  size = 1
  /** The signal it listens to for an abort, if any. */
  signal: CancelSignal | undefined = undefined
  /** Its deadline (epoch ms) while the queue's deadline timer watches it. */
  deadline: number | undefined = undefined
  /** performance.now() at admission; 0 unless the queue was observed then. */
  enqueuedAt = 0
  private caller: Caller<R> | undefined = undefined

  constructor(readonly item: T) {}

  /** Make this a promise call: the caller's promise. Call once, before the entry is enqueued. */
  promise(): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.caller = { resolve, reject }
    })
  }

  /** Make this a streaming call whose partials and end go to `channel`. Call before the entry is enqueued. */
  streamTo(channel: Caller<R>): void {
    this.caller = channel
  }

  /** End the call, once: later settles do nothing. */
  settle(outcome: Settlement<R>): void {
    if (this.settled) return
    this.settled = true
    const batch = this.batch
    if (batch !== undefined) {
      this.batch = undefined
      batch.detach(this)
    }
    if (outcome.ok) this.caller!.resolve(outcome.value)
    else this.caller!.reject(outcome.error)
  }

  /** One more partial of a streaming call; its stream stays open. */
  push(value: R): void {
    if (!this.settled) this.caller!.push!(value)
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

/** Settle with `error` every entry that has not settled yet. */
export function failUnsettled<T, R>(entries: readonly Entry<T, R>[], error: unknown): void {
  for (const entry of entries) entry.settle({ ok: false, error })
}
