import { asCallOptions } from './call-options.js'
import { withControls, type BatchedFunction } from './controls.js'
import { Entry } from './entry.js'
import type { ResolvedBatchOptions } from './options.js'
import { BatchQueue, type CallOptions } from './queue.js'
import { promiseRunner, type BatchHandler } from './run.js'

/** A function that batches its calls into calls of `handler`, with options already validated. */
export function batchedFunction<T, R>(handler: BatchHandler<T, R>, options: ResolvedBatchOptions<T>): BatchedFunction<T, R> {
  const queue = new BatchQueue<T, R>(options, promiseRunner(handler, options.onBatchError))
  const call = (item: T, callOptions?: CallOptions): Promise<R> => {
    const entry = new Entry<T, R>(item)
    const promise = entry.promise()
    queue.enqueue(entry, asCallOptions(callOptions))
    return promise
  }
  return withControls(call, queue)
}
