import { promiseRunner, type BatchHandler } from './calls.js'
import type { CostPoint } from './adaptive.js'
import type { ResolvedBatchOptions } from './options.js'
import { BatchQueue, promiseCalls, type BatchStats, type CallOptions, type QueueObserver } from './queue.js'

/** Controls shared by every batched function. */
export interface BatchControls<T> {
  /** Validated; applies from the next batch to form (a batch already forming keeps its size). */
  setMaxBatchSize(maxBatchSize: number): void
  /** Validated; applies from the next batch to form (a batch already forming keeps its wait). */
  setBatchWaitTimeoutS(batchWaitTimeoutS: number): void
  /**
   * Validated; applies at once. Fewer than now lets the batches running
   * finish and starts no more until fewer than the new limit run. For what
   * is known only once the handler's resources exist, such as the number of
   * instances a model was loaded as (`Model.instances`).
   */
  setMaxConcurrentBatches(maxConcurrentBatches: number): void
  stats(): BatchStats
  /**
   * With `adaptive`: the cost it measured, the mean milliseconds of a batch
   * at each size run lately, ascending (of the `batchKey` that ran last);
   * empty without `adaptive`, before it has measured, or where the clock
   * stands still while code runs.
   */
  costCurve(): CostPoint[]
  /** The options in force (read-only view). */
  readonly options: Readonly<ResolvedBatchOptions<T>>
  /** Attach (or with undefined, detach) the observer that feeds metrics and logs. */
  observe(observer: QueueObserver | undefined): void
}

/** `batch(handler)`: call it with one item, get that item's result. */
export interface BatchedFunction<T, R> extends BatchControls<T> {
  (item: T, options?: CallOptions): Promise<R>
}

/** `batch.stream(handler)`: call it with one item, iterate that item's partials. */
export interface StreamingBatchedFunction<T, R> extends BatchControls<T> {
  (item: T, options?: CallOptions): AsyncIterableIterator<R>
}

/** Marks batched functions so a deployment can find them for metrics and routes. */
export const batchedBrand: unique symbol = Symbol('edgeserve.batched')

/** Keys startNextBatchNow() on a batched function: not part of the package's API. */
const startNow: unique symbol = Symbol('edgeserve.startNextBatchNow')

/**
 * What a batched function's queue holds now waits for no more calls (see
 * Scheduler.startNextBatchNow): a Durable Object calls it for the items a
 * Worker isolate carried together (carried-items.ts).
 */
export function startNextBatchNow(controls: BatchControls<unknown>): void {
  ;(controls as { [startNow]?: () => void })[startNow]?.()
}

/** Give a call function the controls of the queue behind it. */
export function withControls<T, R, F extends (item: T, options?: CallOptions) => unknown>(call: F, queue: BatchQueue<T, R>): F & BatchControls<T> {
  return Object.assign(call, {
    setMaxBatchSize: (value: number) => queue.setMaxBatchSize(value),
    setBatchWaitTimeoutS: (value: number) => queue.setBatchWaitTimeoutS(value),
    setMaxConcurrentBatches: (value: number) => queue.setMaxConcurrentBatches(value),
    stats: () => queue.stats(),
    costCurve: () => queue.costCurve(),
    options: queue.options,
    observe: (observer: QueueObserver | undefined) => {
      queue.observer = observer
    },
    [batchedBrand]: true,
    [startNow]: () => queue.startNextBatchNow(),
  })
}

export function isBatched(value: unknown): value is BatchControls<unknown> {
  return typeof value === 'function' && batchedBrand in value
}

/** A function that batches its calls into calls of `handler`, with options already validated. */
export function batchedFunction<T, R>(handler: BatchHandler<T, R>, options: ResolvedBatchOptions<T>): BatchedFunction<T, R> {
  const queue = new BatchQueue<T, R>(options, promiseRunner(handler, options.onBatchError === 'isolate'))
  return withControls(promiseCalls(queue), queue)
}
