import { BatchHandlerError, FailedItemsError } from '../errors.js'
import { batchedFunction, type BatchControls } from './controls.js'
import type { BatchInfo } from './calls.js'
import { getValidOptions, type BatchOptions, type ResolvedBatchOptions } from './options.js'

/**
 * `@batch({...})` on a method, the Ray Serve spelling.
 *
 * TypeScript decorators cannot change a method's type, so a method declared
 * as `(numbers: number[]) => Promise<number[]>` must also be *called* with a
 * list. That is what the decorated method does: each call passes a list of
 * its items (usually one) and receives their results in order, and the queue
 * merges the lists of concurrent calls into one call of the method, much as
 * Triton merges requests that carry their own batch dimension. A call's items
 * always share a batch, and count as that many items toward `maxBatchSize`.
 *
 * ```ts
 * class BatchAdder {
 *   @batch({ maxBatchSize: 4 })
 *   async handleBatch(numbers: number[]): Promise<number[]> { return numbers.map((n) => n + 1) }
 *   async fetch(req: Request) { const [sum] = await this.handleBatch([1]) }
 * }
 * ```
 *
 * Each instance gets its own queue, so two instances never share a batch:
 * queues live in a WeakMap keyed by the instance, created as it is
 * constructed.
 */
export interface BatchMethodDecorator {
  /** A legacy decorator's call (`experimentalDecorators`), refused: see `LegacyDecoratorCall`. */
  (target: object, propertyKey: string | symbol, descriptor: LegacyDecoratorCall): never
  <This extends object, T, R>(method: DecoratedMethod<This, T, R>, context: ClassMethodDecoratorContext<This>): (this: This, items: T[]) => Promise<R[]>
}

/**
 * What TypeScript tells a project compiled with `experimentalDecorators` at
 * `@batch`. It checks a legacy method decorator as a call with (prototype,
 * name, descriptor) and, when no signature accepts them, says why each one
 * failed. No descriptor is of this type, so its text is in that message (a
 * string literal type is shown as its text), first for `@batch({...})`.
 */
export type LegacyDecoratorCall =
  "edgeserve's @batch is a standard (TC39) decorator, and this project compiles decorators as legacy ones: remove experimentalDecorators from tsconfig.json, or batch with a field, handleBatch = batch(async (items) => results, { maxBatchSize: 4 })"

/**
 * The error for `@batch` run as a legacy decorator (tsc, tsx or esbuild with
 * `experimentalDecorators`), which calls it with (prototype, name, descriptor)
 * and would otherwise fail on the prototype as if it were the method.
 */
export function legacyDecoratorError(name: unknown): TypeError {
  const field = typeof name === 'string' ? name : 'handleBatch'
  return new TypeError(
    `edgeserve's @batch is a standard (TC39) decorator, but ${String(name)} was decorated as a legacy one ` +
      '("experimentalDecorators": true in tsconfig.json, which tsc, tsx and esbuild follow): remove experimentalDecorators, ' +
      `or batch with a field, called with one item: ${field} = batch(async (items) => results, { maxBatchSize: 4 })`,
  )
}

/** A method `@batch` decorates: a list in, one result (or an Error) per item out, in order. */
export type DecoratedMethod<This = object, T = unknown, R = unknown> = (this: This, items: T[], info: BatchInfo) => Promise<ReadonlyArray<R | Error>>

const methodsByInstance = new WeakMap<object, Map<string, BatchControls<unknown>>>()

/** The queues of an instance's decorated methods, by method name (for metrics and routes). */
export function batchedMethodsOf(instance: object): ReadonlyMap<string, BatchControls<unknown>> {
  return methodsByInstance.get(instance) ?? new Map()
}

export function isMethodDecoratorContext(value: unknown): value is ClassMethodDecoratorContext {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'method'
}

export function batchMethod(options: BatchOptions<never> | undefined): BatchMethodDecorator {
  // Validated here, when the class is defined, so a bad option fails at
  // start-up even if the class is never instantiated.
  const validated = getValidOptions(options)
  const decorate = <This extends object, T, R>(method: DecoratedMethod<This, T, R>, context: ClassMethodDecoratorContext<This>) => {
    // A standard decorator's context is an object; a legacy one is passed the member's name.
    if (typeof context !== 'object') throw legacyDecoratorError(context)
    if (context.kind !== 'method' || context.static) {
      throw new TypeError('@batch decorates instance methods; for a function use batch(handler, options)')
    }
    const name = String(context.name)
    const queues = new WeakMap<This, (lists: T[]) => Promise<R[]>>()

    const queueFor = (instance: This) => {
      const { batchSizeFn, batchKey }: ResolvedBatchOptions<T> = validated
      // Each instance gets its own copy of the options: its setters change only its queue.
      const queue = batchedFunction<T[], R[]>((lists, info) => runLists(method, instance, lists, info), {
        ...validated,
        batchSizeFn: (list) => (batchSizeFn ? sumOf(list, batchSizeFn) : list.length),
        batchKey: batchKey && ((list, context) => batchKey(list[0]!, context)),
      })
      let methods = methodsByInstance.get(instance)
      if (!methods) methodsByInstance.set(instance, (methods = new Map<string, BatchControls<unknown>>()))
      methods.set(name, queue)
      return queue
    }

    // Create each instance's queue as it is constructed, so a runtime can find
    // it (for metrics) before the first call.
    context.addInitializer(function (this: This) {
      if (!queues.has(this)) queues.set(this, queueFor(this))
    })

    return function (this: This, items: T[]): Promise<R[]> {
      if (!Array.isArray(items)) {
        return Promise.reject(new TypeError(`${name}() is a @batch method: call it with a list of items, e.g. this.${name}([item])`))
      }
      if (items.length === 0) return Promise.resolve([])
      let queue = queues.get(this)
      if (!queue) queues.set(this, (queue = queueFor(this)))
      return queue(items)
    }
  }
  // BatchMethodDecorator's legacy signature is there for TypeScript's message:
  // such a call throws at its first line, and returns nothing.
  return decorate as BatchMethodDecorator
}

function sumOf<T>(list: T[], sizeOf: (item: T) => number): number {
  let total = 0
  for (const item of list) total += sizeOf(item)
  return total
}

/** Flatten the callers' lists into one call of the method, then hand each caller its slice. */
async function runLists<This, T, R>(method: DecoratedMethod<This, T, R>, instance: This, lists: T[][], info: BatchInfo): Promise<(R[] | Error)[]> {
  const items: T[] = []
  for (const list of lists) items.push(...list)
  let results: ReadonlyArray<R | Error>
  try {
    results = await method.call(instance, items, info)
  } catch (error) {
    throw error instanceof FailedItemsError ? failedLists(error, lists) : error
  }
  if (!Array.isArray(results) || results.length !== items.length) {
    // Returned per caller rather than thrown, so 'isolate' does not bisect a
    // batch whose only fault is the handler's own contract.
    const error = new BatchHandlerError(
      `the batched method returned ${Array.isArray(results) ? `${results.length} results` : typeof results} ` +
        `for a batch of ${items.length} items; it must return exactly one result (or Error) per item, in order`,
    )
    return lists.map(() => error)
  }
  let offset = 0
  return lists.map((list) => {
    const slice = results.slice(offset, (offset += list.length))
    return slice.find((result): result is Error => result instanceof Error) ?? (slice as R[])
  })
}

/**
 * The method named failed items by their index in the flattened items; the
 * queue's callers are the lists. A list fails with the error of its first
 * failed item, and an index past the items is left for the queue to refuse.
 */
function failedLists<T>(error: FailedItemsError, lists: readonly T[][]): FailedItemsError {
  const byList = new Map<number, Error>()
  let list = 0
  let end = lists[0]?.length ?? 0
  for (const [index, itemError] of error.errors) {
    while (index >= end && list < lists.length) end += lists[++list]?.length ?? 0
    if (!byList.has(list)) byList.set(list, itemError)
  }
  return new FailedItemsError(byList, error.message)
}
