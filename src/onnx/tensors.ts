import type { Tensor } from 'onnxruntime-web'
import { FailedItemsError, HTTPError } from '../errors.js'

type TensorClass = typeof import('onnxruntime-web').Tensor
type NumericArray = Float32Array | Int32Array | BigInt64Array | Uint8Array

/**
 * Stack per-item inputs of equal shape into one `[N, ...shape]` tensor: the
 * one copy a batch needs to become a single `session.run`.
 *
 * An item that does not fit the shape (too few or too many values, not a
 * list of numbers) is that item's own failure: stack() throws a
 * `FailedItemsError` that fails its caller with a 422, and the batch queue
 * runs the batch again without it.
 */
export function stack(TensorClass: TensorClass, items: readonly ArrayLike<number>[], shape: readonly number[], type: 'float32' | 'int32' = 'float32'): Tensor {
  const size = shape.reduce((a, b) => a * b, 1)
  const failed = new Map<number, Error>()
  for (let i = 0; i < items.length; i++) {
    const item = items[i]
    const problem = listProblem(item, type)
    if (problem !== undefined) failed.set(i, unfit(`item ${problem}; shape [${shape.join(', ')}] needs ${size} numbers`))
    else if (item!.length !== size) failed.set(i, unfit(`item has ${item!.length} values, but shape [${shape.join(', ')}] needs ${size}`))
  }
  if (failed.size > 0) throw new FailedItemsError(failed)
  const data = type === 'float32' ? new Float32Array(items.length * size) : new Int32Array(items.length * size)
  items.forEach((item, i) => data.set(item, i * size))
  return new TensorClass(type, data, [items.length, ...shape])
}

/** Stack int64 token ids (BigInt64Array or numbers) into `[N, length]`; items that do not fit fail alone, as in stack(). */
export function stackInt64(TensorClass: TensorClass, items: readonly (BigInt64Array | readonly number[])[], length: number): Tensor {
  const data = new BigInt64Array(items.length * length)
  const failed = new Map<number, Error>()
  items.forEach((item, i) => {
    const problem = listProblem(item, 'int64')
    if (problem !== undefined) return failed.set(i, unfit(`item ${problem}; shape [${length}] needs ${length} integer ids`))
    if (item.length !== length) return failed.set(i, unfit(`item has ${item.length} ids, but shape [${length}] needs ${length}`))
    for (let j = 0; j < length; j++) data[i * length + j] = BigInt(item[j]!)
  })
  if (failed.size > 0) throw new FailedItemsError(failed)
  return new TensorClass('int64', data, [items.length, length])
}

/** Split a `[N, ...]` output back into N per-item views (no copies). */
export function split(tensor: Tensor): NumericArray[] {
  const [n, ...rest] = tensor.dims
  if (n === undefined) throw new RangeError('split() needs a tensor with a batch axis')
  const size = rest.reduce((a, b) => a * b, 1)
  const data = tensor.data as NumericArray
  return Array.from({ length: n }, (_, i) => data.subarray(i * size, (i + 1) * size))
}

export interface Padded {
  tensor: Tensor
  /** 1 where a value is real, 0 where it is padding: `[N, length]`. */
  mask: Tensor
  /** The length every item was padded to. */
  length: number
  /** Each item's own length. */
  lengths: number[]
}

/**
 * Pad variable-length items to one length: the batch's longest, or the
 * smallest of `sizes` that fits (fixed buckets keep the number of distinct
 * shapes, and so of compiled kernels, small). An item that is not a list of
 * numbers, or is longer than every allowed size, fails alone, as in stack().
 */
export function pad(
  TensorClass: TensorClass,
  items: readonly ArrayLike<number>[],
  options: {
    to?: 'longest' | readonly number[] | undefined
    value?: number | undefined
    side?: 'right' | 'left' | undefined
    type?: 'float32' | 'int64' | undefined
  } = {},
): Padded {
  const to = options.to ?? 'longest'
  const largest = to === 'longest' ? Infinity : Math.max(...to)
  const type = options.type ?? 'float32'
  const failed = new Map<number, Error>()
  items.forEach((item, i) => {
    let problem = listProblem(item, type)
    if (problem === undefined && item.length > largest) problem = `has ${item.length} values, more than every allowed size (${[...to].join(', ')})`
    if (problem !== undefined) failed.set(i, unfit(`item ${problem}`))
  })
  if (failed.size > 0) throw new FailedItemsError(failed)
  const lengths = items.map((item) => item.length)
  const longest = Math.max(0, ...lengths)
  let length = longest
  if (to !== 'longest') length = [...to].sort((a, b) => a - b).find((size) => size >= longest)!
  const value = options.value ?? 0
  const left = options.side === 'left'
  const mask = new BigInt64Array(items.length * length)
  const data = type === 'int64' ? new BigInt64Array(items.length * length).fill(BigInt(value)) : new Float32Array(items.length * length).fill(value)
  items.forEach((item, i) => {
    const offset = i * length + (left ? length - item.length : 0)
    for (let j = 0; j < item.length; j++) {
      if (data instanceof BigInt64Array) data[offset + j] = BigInt(item[j]!)
      else data[offset + j] = item[j]!
      mask[offset + j] = 1n
    }
  })
  return {
    tensor: new TensorClass(type, data, [items.length, length]),
    mask: new TensorClass('int64', mask, [items.length, length]),
    length,
    lengths,
  }
}

/** A client's item that does not fit: its own 422, whatever the batch around it. */
function unfit(message: string): HTTPError {
  return new HTTPError(422, message)
}

/** The element types the helpers build tensors of. */
type ElementType = 'float32' | 'int32' | 'int64'

/**
 * Why `item` is not a list of numbers that fit a `type` tensor (a typed
 * array, or an array of numbers; of bigints too for int64), or undefined if
 * it is one. A plain array's values are checked: a typed array's set()
 * would quietly turn a string or an object into NaN, a number past float32's
 * range into Infinity, a fraction into an integer, and throw at a bigint.
 */
/** A typed array (every view but a DataView): its values can be read by index. */
function hasLength(view: ArrayBufferView): view is ArrayBufferView & ArrayLike<unknown> {
  return !(view instanceof DataView)
}

function listProblem(item: unknown, type: ElementType): string | undefined {
  const what = type === 'int64' ? 'integer ids' : 'numbers'
  if (ArrayBuffer.isView(item)) {
    const bigints = item instanceof BigInt64Array || item instanceof BigUint64Array
    if (bigints) return type === 'int64' ? undefined : `is a ${item.constructor.name}, not a list of numbers`
    if (!hasLength(item)) return `is a ${item.constructor.name}, not a list of ${what}`
    // A float array given for int64 ids: its values must still be whole.
    return type === 'int64' ? valuesProblem(item, type) : undefined
  }
  if (typeof item !== 'object' || item === null || typeof (item as { length?: unknown }).length !== 'number') {
    return `is not a list of ${what} (received ${describe(item)})`
  }
  return valuesProblem(item as ArrayLike<unknown>, type)
}

function valuesProblem(list: ArrayLike<unknown>, type: ElementType): string | undefined {
  for (let j = 0; j < list.length; j++) {
    const problem = valueProblem(list[j], type)
    if (problem !== undefined) return `has a value ${problem} at [${j}] (received ${describe(list[j])})`
  }
  return undefined
}

/** The largest magnitude a float32 holds: a number past it becomes Infinity in the tensor. */
const FLOAT32_MAX = 3.4028234663852886e38
const INT64_BOUND = 2n ** 63n

/**
 * Why `value` cannot go into a `type` tensor as it is, or undefined. NaN may
 * go into float32: models such as tree ensembles read it as a missing value.
 */
function valueProblem(value: unknown, type: ElementType): string | undefined {
  if (typeof value === 'bigint' && type === 'int64') return value < -INT64_BOUND || value >= INT64_BOUND ? "outside int64's range" : undefined
  if (typeof value !== 'number') return 'that is not a number'
  if (type === 'float32') return Math.abs(value) > FLOAT32_MAX ? 'that float32 cannot hold' : undefined
  if (!Number.isInteger(value)) return 'that is not an integer'
  const bound = type === 'int32' ? 2 ** 31 : 2 ** 63
  return value < -bound || value >= bound ? `outside ${type}'s range` : undefined
}

function describe(value: unknown): string {
  if (value === null || value === undefined || typeof value === 'number' || typeof value === 'boolean') return String(value)
  if (typeof value === 'bigint') return `${value}n`
  if (typeof value === 'string') return `a string of ${value.length} character${value.length === 1 ? '' : 's'}`
  if (Array.isArray(value)) return 'an array'
  return typeof value === 'object' ? 'an object' : typeof value
}
