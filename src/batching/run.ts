import { BatchHandlerError } from '../errors.js'
import type { Batch, BatchInfo } from './call-batch.js'
import { withControls, type BatchedFunction } from './controls.js'
import { Entry, failUnsettled } from './entry.js'
import { BatchQueue, type CallOptions } from './queue.js'
import type { OnBatchError, ResolvedBatchOptions } from './options.js'

/** The batched method: a list in, one result (or an Error) per item out, in order. */
export type BatchHandler<T, R> = (
  items: T[],
  info: BatchInfo,
) => Promise<ReadonlyArray<R | Error>> | ReadonlyArray<R | Error>

/**
 * Runs one batch through a handler and hands caller i its result i.
 *
 * A thrown error fails every caller of the batch, or with
 * `onBatchError: 'isolate'` bisects the batch until the failing items are
 * found, so one poisonous input does not take its neighbours down with it.
 */
export function promiseRunner<T, R>(handler: BatchHandler<T, R>, onBatchError: OnBatchError) {
  const isolate = onBatchError === 'isolate'
  return (batch: Batch<T, R>): Promise<void> =>
    runEntries(handler, batch, batch.entries, batch.items, isolate)
}

async function runEntries<T, R>(
  handler: BatchHandler<T, R>,
  batch: Batch<T, R>,
  entries: Entry<T, R>[],
  items: T[],
  isolate: boolean,
): Promise<void> {
  let results: ReadonlyArray<R | Error>
  try {
    results = await handler(items, batch.infoFor(entries))
  } catch (error) {
    if (!isolate || entries.length === 1) return failUnsettled(entries, error)
    // Re-run the halves with the callers who are still waiting; a half that
    // succeeds is answered, a half that throws is split again.
    const live = entries.filter((entry) => !entry.settled)
    if (live.length === 0) return
    if (live.length === 1) return runEntries(handler, batch, live, itemsOf(live), isolate)
    const middle = Math.ceil(live.length / 2)
    const [front, back] = [live.slice(0, middle), live.slice(middle)]
    await runEntries(handler, batch, front, itemsOf(front), isolate)
    await runEntries(handler, batch, back, itemsOf(back), isolate)
    return
  }
  if (!Array.isArray(results)) {
    return failUnsettled(
      entries,
      new BatchHandlerError(
        `the batched handler must return an array with one result per item, returned ${results === null ? 'null' : typeof results}`,
      ),
    )
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
  batch.handOut(entries, results)
}

function itemsOf<T, R>(entries: readonly Entry<T, R>[]): T[] {
  return entries.map((entry) => entry.item)
}

/** A function that batches its calls into calls of `handler`, with options already validated. */
export function batchedFunction<T, R>(handler: BatchHandler<T, R>, options: ResolvedBatchOptions<T>): BatchedFunction<T, R> {
  const queue = new BatchQueue<T, R>(options, promiseRunner(handler, options.onBatchError))
  return withControls(callOf(queue), queue)
}

/** One call: an entry for the item, queued, and the promise of its result. */
function callOf<T, R>(queue: BatchQueue<T, R>): (item: T, callOptions?: CallOptions) => Promise<R> {
  return (item, callOptions) => {
    const entry = new Entry<T, R>(item)
    const promise = entry.promise()
    // Only an object is options: `items.map(f)` passes each item's index there, and that is a plain call.
    queue.enqueue(entry, typeof callOptions === 'object' && callOptions !== null ? callOptions : undefined)
    return promise
  }
}
