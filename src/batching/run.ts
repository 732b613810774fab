import { BatchHandlerError } from '../errors.js'
import type { OnBatchError } from './options.js'
import type { BatchInfo, Entry, RunningBatch, Settler } from './queue.js'

/** The batched method: a list in, one result (or an Error) per item out, in order. */
export type BatchHandler<T, R> = (
  items: T[],
  info: BatchInfo,
) => Promise<ReadonlyArray<R | Error>> | ReadonlyArray<R | Error>

export interface PromiseSettler<R> {
  resolve(value: R): void
  reject(error: unknown): void
}

type PromiseEntry<T, R> = Entry<T, PromiseSettler<R>>

/**
 * Runs one batch through a handler and hands caller i its result i.
 *
 * A thrown error fails the batch's callers (rule 5), or with
 * `onBatchError: 'isolate'` bisects the batch until the failing items are
 * found, so one poisonous input does not take its neighbours down with it.
 */
export function promiseRunner<T, R>(handler: BatchHandler<T, R>, onBatchError: OnBatchError) {
  const isolate = onBatchError === 'isolate'
  return (batch: RunningBatch<T, PromiseSettler<R>>): Promise<void> => runEntries(handler, batch, batch.entries, isolate)
}

async function runEntries<T, R>(
  handler: BatchHandler<T, R>,
  batch: RunningBatch<T, PromiseSettler<R>>,
  entries: PromiseEntry<T, R>[],
  isolate: boolean,
): Promise<void> {
  let results: ReadonlyArray<R | Error>
  try {
    results = await handler(
      entries.map((entry) => entry.item),
      infoFor(batch, entries),
    )
  } catch (error) {
    if (!isolate || entries.length === 1) return failAll(entries, error)
    // Re-run the halves with the callers who are still waiting; a half that
    // succeeds is answered, a half that throws is split again.
    const live = entries.filter((entry) => !entry.settled)
    if (live.length === 0) return
    if (live.length === 1) return runEntries(handler, batch, live, isolate)
    const middle = Math.ceil(live.length / 2)
    await runEntries(handler, batch, live.slice(0, middle), isolate)
    await runEntries(handler, batch, live.slice(middle), isolate)
    return
  }
  if (!Array.isArray(results)) {
    return failAll(
      entries,
      new BatchHandlerError(
        `the batched handler must return an array with one result per item, returned ${results === null ? 'null' : typeof results}`,
      ),
    )
  }
  if (results.length !== entries.length) {
    return failAll(
      entries,
      new BatchHandlerError(
        `the batched handler returned ${results.length} results for a batch of ${entries.length} items; ` +
          'it must return exactly one result (or Error) per item, in order',
      ),
    )
  }
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!
    if (entry.settled) continue
    const result = results[i] as R | Error
    entry.queue.settle(entry)
    if (result instanceof Error) entry.settler.reject(result)
    else entry.settler.resolve(result)
  }
}

/** On a re-run of part of a batch, `isActive(i)` must index that part. */
function infoFor<T, S extends Settler>(batch: RunningBatch<T, S>, entries: Entry<T, S>[]): BatchInfo {
  if (entries === batch.entries) return batch
  return {
    key: batch.key,
    get signal() {
      return batch.signal
    },
    isActive: (index) => entries[index]?.settled === false,
  }
}

function failAll<T, R>(entries: PromiseEntry<T, R>[], error: unknown): void {
  for (const entry of entries) {
    if (entry.settled) continue
    entry.queue.settle(entry)
    entry.settler.reject(error)
  }
}
