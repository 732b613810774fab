import { BatchHandlerError, FailedItemsError, RequestCancelledError } from '../errors.js'
import { Entry, type Batch, type BatchInfo } from './calls.js'
import { failItemsAndRerun, failUnsettled } from './item-errors.js'

/** Put in slot i of a yielded step to end caller i's stream early. */
export const endOfStream: unique symbol = Symbol('edgeserve.endOfStream')
export type EndOfStream = typeof endOfStream

/** How a streaming call settles when its stream ends: with no value (its channel's `resolve` takes none). */
const STREAM_ENDED = { ok: true, value: undefined as never } as const

/** One step of a streaming handler: a partial (or an Error, or `endOfStream`) per item. */
export type StreamStep<R> = ReadonlyArray<R | Error | EndOfStream>

export type StreamBatchHandler<T, R> = (items: T[], info: BatchInfo) => AsyncIterable<StreamStep<R>>

/**
 * One caller's view of a streaming batch: an async iterator of its partials.
 *
 * Partials are buffered until read (they are small: tokens, progress), so a
 * slow reader never blocks the others in its batch. Calling `return()` (a
 * `break` out of `for await`) leaves the queue or the running batch.
 */
export class StreamChannel<R> implements AsyncIterableIterator<R> {
  private readonly buffer: R[] = []
  private done = false
  private error: { reason: unknown } | undefined
  private waiting: { resolve(result: IteratorResult<R>): void; reject(error: unknown): void } | undefined

  /** The call it reads, so that `return()` can leave the queue or the batch: set once the call is made. */
  call: { readonly settled: boolean; leave(reason: Error): void } | undefined = undefined

  push(value: R): void {
    if (this.done) return
    if (this.waiting) {
      const waiting = this.waiting
      this.waiting = undefined
      waiting.resolve({ value, done: false })
    } else this.buffer.push(value)
  }

  /** The call settled with success: its stream ends (a stream's end carries no value). */
  end(): void {
    if (this.done) return
    this.done = true
    if (this.waiting) {
      const waiting = this.waiting
      this.waiting = undefined
      waiting.resolve({ value: undefined, done: true })
    }
  }

  reject(reason: unknown): void {
    if (this.done) return
    this.done = true
    if (this.waiting) {
      const waiting = this.waiting
      this.waiting = undefined
      waiting.reject(reason)
    } else this.error = { reason }
  }

  next(): Promise<IteratorResult<R>> {
    if (this.buffer.length > 0) return Promise.resolve({ value: this.buffer.shift()!, done: false })
    if (this.error) {
      const { reason } = this.error
      this.error = undefined
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- what the handler threw reaches the reader as it was
      return Promise.reject(reason)
    }
    if (this.done) return Promise.resolve({ value: undefined, done: true })
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject }
    })
  }

  return(): Promise<IteratorResult<R>> {
    // Close first, so that leaving (which rejects this settler) is a no-op here.
    this.end()
    this.buffer.length = 0
    this.error = undefined
    if (this.call !== undefined && !this.call.settled) this.call.leave(new RequestCancelledError('the stream was closed by its reader'))
    return Promise.resolve({ value: undefined, done: true })
  }

  [Symbol.asyncIterator](): this {
    return this
  }
}

/**
 * Runs one streaming batch: step by step, partial i goes to caller i. The
 * generator is closed as soon as nobody listens, and when it returns every
 * stream still open ends. A `FailedItemsError` thrown before the first step
 * fails the items it names and starts the stream again for the others.
 */
export function streamRunner<T, R>(handler: StreamBatchHandler<T, R>) {
  return (batch: Batch<T, R>): Promise<void> => runStream(handler, batch, batch.entries, batch.items, batch)
}

/**
 * Runs the stream of `entries`, all of the batch or (after the handler named
 * failed items before its first step) the rest of it.
 */
async function runStream<T, R>(handler: StreamBatchHandler<T, R>, batch: Batch<T, R>, entries: Entry<T, R>[], items: T[], info: BatchInfo): Promise<void> {
  let streamed = false
  try {
    for await (const step of handler(items, info)) {
      if (!Array.isArray(step) || step.length !== entries.length) {
        const got = Array.isArray(step) ? `${step.length} partials` : typeof step
        failUnsettled(
          entries,
          new BatchHandlerError(
            `the streaming handler yielded ${got} for a batch of ${entries.length} items; ` +
              'each step must hold one partial (or Error, or endOfStream) per item, in order',
          ),
        )
        return
      }
      deliverStep(entries, step)
      streamed = true
      if (batch.live === 0) return // leaving the loop closes the generator
    }
    for (const entry of entries) entry.settle(STREAM_ENDED)
  } catch (error) {
    if (!(error instanceof FailedItemsError)) return failUnsettled(entries, error)
    // Only a stream that has sent nothing yet can start again without the failed items.
    const runRest = streamed
      ? undefined
      : (rest: Entry<T, R>[]) =>
          runStream(
            handler,
            batch,
            rest,
            rest.map((entry) => entry.item),
            batch.infoFor(rest),
          )
    return failItemsAndRerun(error, entries, runRest)
  }
}

/** A streaming call: its partials go to its channel, and its end or error closes it. */
export class StreamEntry<T, R> extends Entry<T, R> {
  constructor(
    item: T,
    readonly channel: StreamChannel<R>,
  ) {
    super(item)
    this.resolve = () => channel.end()
    this.reject = (error) => channel.reject(error)
  }

  /** One more partial; the stream stays open. */
  push(value: R): void {
    if (!this.settled) this.channel.push(value)
  }
}

/** Hand caller i its output i of one step: a partial, an Error, or the end of its stream. */
export function deliverStep<T, R>(entries: readonly Entry<T, R>[], step: StreamStep<R>): void {
  for (let i = 0; i < entries.length; i++) {
    // A streaming queue's calls are all StreamEntries (streamingFunction() makes them).
    const entry = entries[i] as StreamEntry<T, R>
    const output = step[i]!
    if (output === endOfStream) entry.settle(STREAM_ENDED)
    else if (output instanceof Error) entry.settle({ ok: false, error: output })
    else entry.push(output)
  }
}
