import { asCallOptions } from './call-options.js'
import { continuousRunner, type ContinuousStep } from './continuous.js'
import { batchedFunction, withControls, type BatchedFunction, type StreamingBatchedFunction } from './controls.js'
import {
  batchMethod,
  isMethodDecoratorContext,
  legacyDecoratorError,
  type BatchMethodDecorator,
  type DecoratedMethod,
  type LegacyDecoratorCall,
} from './decorator.js'
import { formatReceived, getValidOptions, type BatchOptions } from './options.js'
import { BatchQueue, type CallOptions } from './queue.js'
import type { BatchHandler, BatchInfo, BatchRunner } from './calls.js'
import { StreamChannel, StreamEntry, streamRunner, type StreamBatchHandler } from './stream.js'

// The types of what batch() returns, for modules that import them from here.
export { isBatched, type BatchControls, type BatchedFunction, type StreamingBatchedFunction } from './controls.js'

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
 *
 * On Cloudflare Workers, call it inside a deployment (its replicas are Durable
 * Objects): workerd keeps a Worker's requests apart, so elsewhere a batched
 * function busy with one request's calls refuses another request's with a
 * TypeError (docs/workers.md, "A model cheaper than the hop").
 */
// A caller never receives an Error: one in its slot fails the call. Excluded, an HTTPError a handler
// returns for a bad item does not widen the caller's result type (number | HTTPError, say).
export function batch<T, R>(handler: BatchHandler<T, R>, options?: BatchOptions<T>): BatchedFunction<T, Exclude<R, Error>>
export function batch<This extends object, T, R>(
  method: (this: This, items: T[], info: BatchInfo) => Promise<ReadonlyArray<R | Error>>,
  context: ClassMethodDecoratorContext<This>,
): (this: This, items: T[]) => Promise<R[]>
export function batch(options?: BatchOptions<never>): BatchMethodDecorator
/** Legacy decorators' call of `@batch`, refused: see `LegacyDecoratorCall`. */
export function batch(target: object, propertyKey: string | symbol, descriptor: LegacyDecoratorCall): never
export function batch(first?: unknown, second?: unknown, ...legacy: unknown[]): unknown {
  // Only legacy decorators (experimentalDecorators) pass a third argument: (prototype or class, name, descriptor).
  if (legacy.length > 0 && (typeof second === 'string' || typeof second === 'symbol')) throw legacyDecoratorError(second)
  if (typeof first === 'function') {
    // `@batch` without parentheses: TypeScript hands us (method, context).
    if (isMethodDecoratorContext(second)) return batchMethod(undefined)(first as DecoratedMethod, second)
    return batchedFunction(first as BatchHandler<unknown, unknown>, getValidOptions(second as BatchOptions<unknown> | undefined))
  }
  // Anything else must be the decorator form, options alone. Refuse the rest
  // here, at once, rather than return a decorator that fails on first use.
  if (second !== undefined) {
    throw new TypeError(
      `batch(handler, options) needs a handler function (items) => results first, received ${formatReceived(first)}; ` +
        'to decorate a method, pass the options alone: @batch({ maxBatchSize: 4 })',
    )
  }
  if (first !== undefined && (first === null || typeof first !== 'object' || Array.isArray(first))) {
    throw new TypeError(
      `batch() needs a handler function (items) => results, or options alone to decorate a method ` +
        `(@batch({ maxBatchSize: 4 })), received ${formatReceived(first)}`,
    )
  }
  return batchMethod(first)
}

/**
 * Batch calls into a streaming handler: an async generator that yields, at
 * each step, one partial result per item (or `endOfStream` for an item that
 * has finished). Each caller iterates its own partials.
 */
// R defaults to never for the handler's sake, not the caller's. While TypeScript
// infers R from the handler, a step's contextual type is StreamStep<R> with R
// as yet unknown: R | Error | EndOfStream is then just unknown, and
// `items.map(() => endOfStream)` widens to symbol[], which fails against the
// partials of another step (string[] | symbol[]). With the default, that type
// is Error | EndOfStream while R is inferred, so endOfStream keeps its type.
batch.stream = function stream<T, R = never>(handler: StreamBatchHandler<T, R>, options?: BatchOptions<T>): StreamingBatchedFunction<T, R> {
  if (typeof handler !== 'function') {
    throw new TypeError(`batch.stream() needs an async generator function (items) => steps, received ${formatReceived(handler)}`)
  }
  return streamingFunction(streamRunner(handler), options)
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
// R defaults to never so that a step returning `items.map(() => endOfStream)`
// keeps endOfStream's type (see batch.stream above).
batch.continuous = function continuous<T, R = never>(step: ContinuousStep<T, R>, options?: BatchOptions<T>): StreamingBatchedFunction<T, R> {
  if (typeof step !== 'function') {
    throw new TypeError(`batch.continuous() needs a step function (items) => outputs, received ${formatReceived(step)}`)
  }
  return streamingFunction(continuousRunner(step), options)
}

function streamingFunction<T, R>(runner: BatchRunner<T, R>, options: BatchOptions<T> | undefined): StreamingBatchedFunction<T, R> {
  const queue = new BatchQueue<T, R>(getValidOptions(options), runner)
  const call = (item: T, callOptions?: CallOptions): AsyncIterableIterator<R> => {
    const channel = new StreamChannel<R>()
    const entry = new StreamEntry<T, R>(item, channel)
    channel.call = entry
    queue.enqueue(entry, asCallOptions(callOptions))
    return channel
  }
  return withControls(call, queue)
}
