import { withControls, type BatchedFunction } from './controls.js'
import { Entry } from './entry.js'
import type { ResolvedBatchOptions } from './options.js'
import { BatchQueue, type CallOptions } from './queue.js'
import { promiseRunner, type BatchHandler } from './run.js'

/** A function that batches its calls into calls of `handler`, with options already validated. */
export function batchedFunction<T, R>(handler: BatchHandler<T, R>, options: ResolvedBatchOptions<T>): BatchedFunction<T, R> {
  const queue = new BatchQueue<T, R>(options, promiseRunner(handler, options.onBatchError))
  return withControls(callOf(queue), queue)
}

/**
 * The call itself, made apart from batchedFunction() so that `queue` is a
 * parameter: a `const` the closure captures is checked on every call for
 * being read before it was initialized. Its options are checked inline, as
 * `asCallOptions()` does (an object, else a plain call): a call of a
 * module's function is checked on every call for being that function.
 */
function callOf<T, R>(queue: BatchQueue<T, R>): (item: T, callOptions?: CallOptions) => Promise<R> {
  return (item, callOptions) => {
    const entry = new Entry<T, R>(item)
    const promise = entry.promise()
    queue.enqueue(entry, typeof callOptions === 'object' && callOptions !== null ? callOptions : undefined)
    return promise
  }
}
