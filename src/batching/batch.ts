import { batchMethod, isMethodDecoratorContext, type BatchMethodDecorator } from './decorator.js'
import { describe, getValidOptions, type BatchOptions, type ResolvedBatchOptions } from './options.js'
import { BatchQueue, type BatchInfo, type BatchStats, type CallOptions, type QueueObserver } from './queue.js'
import { promiseRunner, type BatchHandler, type PromiseSettler } from './run.js'
import { continuousRunner, type ContinuousStep } from './continuous.js'
import { StreamChannel, streamRunner, type StreamBatchHandler } from './stream.js'

/** Controls shared by every batched function. */
export interface BatchControls<T> {
  /** Validated; applies from the next batch. */
  setMaxBatchSize(maxBatchSize: number): void
  /** Validated; applies from the next batch. */
  setBatchWaitTimeoutS(batchWaitTimeoutS: number): void
  stats(): BatchStats
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

function controls<T>(queue: BatchQueue<T, never>) {
  return {
    setMaxBatchSize: (value: number) => queue.setMaxBatchSize(value),
    setBatchWaitTimeoutS: (value: number) => queue.setBatchWaitTimeoutS(value),
    stats: () => queue.stats(),
    options: queue.options,
    observe: (observer: QueueObserver | undefined) => {
      queue.observer = observer
    },
    [batchedBrand]: true,
  }
}

function batchFunction<T, R>(handler: BatchHandler<T, R>, options?: BatchOptions<T>): BatchedFunction<T, R> {
  if (typeof handler !== 'function') {
    throw new TypeError(`batch() needs a handler function (items) => results, received ${typeof handler}`)
  }
  const resolved = getValidOptions(options)
  const queue = new BatchQueue<T, PromiseSettler<R>>(resolved, promiseRunner(handler, resolved.onBatchError))
  const call = (item: T, callOptions?: CallOptions): Promise<R> =>
    new Promise<R>((resolve, reject) => {
      queue.enqueue(item, callOptions, { resolve, reject })
    })
  return Object.assign(call, controls(queue as BatchQueue<T, never>))
}

/**
 * Batch single calls into calls of `handler` with a list.
 *
 * ```ts
 * class BatchAdder {
 *   handleBatch = batch(async (numbers: number[]) => numbers.map((n) => n + 1), { maxBatchSize: 4 })
 * }
 * await adder.handleBatch(1) // 2, computed together with concurrent calls
 * ```
 *
 * Called with options only, it is a TC39 method decorator (`@batch({...})`),
 * for readers coming from Ray Serve; see `./decorator.ts` for its call form.
 */
export function batch<T, R>(handler: BatchHandler<T, R>, options?: BatchOptions<T>): BatchedFunction<T, R>
export function batch<This extends object, T, R>(
  method: (this: This, items: T[], info: BatchInfo) => Promise<ReadonlyArray<R | Error>>,
  context: ClassMethodDecoratorContext<This>,
): (this: This, items: T[]) => Promise<R[]>
export function batch(options?: BatchOptions<never>): BatchMethodDecorator
export function batch(first?: unknown, second?: unknown): unknown {
  if (typeof first === 'function') {
    // `@batch` without parentheses: TypeScript hands us (method, context).
    if (isMethodDecoratorContext(second)) return batchMethod({})(first as never, second as never)
    return batchFunction(first as BatchHandler<unknown, unknown>, second as BatchOptions<unknown>)
  }
  // Anything else must be the decorator form, options alone. Refuse the rest
  // here, at once, rather than return a decorator that fails on first use.
  if (second !== undefined) {
    throw new TypeError(
      `batch(handler, options) needs a handler function (items) => results first, received ${describe(first)}; ` +
        'to decorate a method, pass the options alone: @batch({ maxBatchSize: 4 })',
    )
  }
  if (first !== undefined && (first === null || typeof first !== 'object' || Array.isArray(first))) {
    throw new TypeError(
      `batch() needs a handler function (items) => results, or options alone to decorate a method ` +
        `(@batch({ maxBatchSize: 4 })), received ${describe(first)}`,
    )
  }
  return batchMethod(first as BatchOptions<never> | undefined)
}

/**
 * Batch calls into a streaming handler: an async generator that yields, at
 * each step, one partial result per item (or `endOfStream` for an item that
 * has finished). Each caller iterates its own partials.
 */
batch.stream = function stream<T, R>(
  handler: StreamBatchHandler<T, R>,
  options?: BatchOptions<T>,
): StreamingBatchedFunction<T, R> {
  if (typeof handler !== 'function') {
    throw new TypeError(`batch.stream() needs an async generator function (items) => steps, received ${typeof handler}`)
  }
  const queue = new BatchQueue<T, StreamChannel<R>>(getValidOptions(options), streamRunner(handler))
  return Object.assign(streamCall(queue), controls(queue as BatchQueue<T, never>))
}

/**
 * Continuous (iteration-level) batching: `step` advances every active item by
 * one step; new calls join at the next step and finished ones leave, with at
 * most `maxBatchSize` active. Each caller iterates its own outputs.
 *
 * ```ts
 * const generate = batch.continuous(async (sequences: Sequence[]) => {
 *   const next = await model.nextTokens(sequences)          // one session.run for all
 *   return sequences.map((s, i) => (s.done ? endOfStream : next[i]))
 * }, { maxBatchSize: 16 })
 * for await (const token of generate(new Sequence(prompt))) ...
 * ```
 */
batch.continuous = function continuous<T, R>(
  step: ContinuousStep<T, R>,
  options?: BatchOptions<T>,
): StreamingBatchedFunction<T, R> {
  if (typeof step !== 'function') {
    throw new TypeError(`batch.continuous() needs a step function (items) => outputs, received ${typeof step}`)
  }
  const queue = new BatchQueue<T, StreamChannel<R>>(getValidOptions(options), continuousRunner(step))
  return Object.assign(streamCall(queue), controls(queue as BatchQueue<T, never>))
}

function streamCall<T, R>(queue: BatchQueue<T, StreamChannel<R>>) {
  return (item: T, callOptions?: CallOptions): AsyncIterableIterator<R> => {
    const channel = new StreamChannel<R>()
    channel.entry = queue.enqueue(item, callOptions, channel)
    return channel
  }
}

export function isBatched(value: unknown): value is BatchControls<unknown> {
  return typeof value === 'function' && batchedBrand in value
}
