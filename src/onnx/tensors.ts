import type { Tensor } from 'onnxruntime-web'

type TensorClass = typeof import('onnxruntime-web').Tensor
type NumericArray = Float32Array | Int32Array | BigInt64Array | Uint8Array

/**
 * Stack per-item inputs of equal shape into one `[N, ...shape]` tensor: the
 * one copy a batch needs to become a single `session.run`.
 */
export function stack(
  TensorClass: TensorClass,
  items: readonly ArrayLike<number>[],
  shape: readonly number[],
  type: 'float32' | 'int32' = 'float32',
): Tensor {
  const size = shape.reduce((a, b) => a * b, 1)
  const data = type === 'float32' ? new Float32Array(items.length * size) : new Int32Array(items.length * size)
  items.forEach((item, i) => {
    if (item.length !== size) {
      throw new RangeError(`item ${i} has ${item.length} values, but shape [${shape.join(', ')}] needs ${size}`)
    }
    data.set(item, i * size)
  })
  return new TensorClass(type, data, [items.length, ...shape])
}

/** Stack int64 token ids (BigInt64Array or numbers) into `[N, length]`. */
export function stackInt64(TensorClass: TensorClass, items: readonly (BigInt64Array | readonly number[])[], length: number): Tensor {
  const data = new BigInt64Array(items.length * length)
  items.forEach((item, i) => {
    if (item.length !== length) throw new RangeError(`item ${i} has ${item.length} ids, expected ${length}`)
    for (let j = 0; j < length; j++) data[i * length + j] = BigInt(item[j]!)
  })
  return new TensorClass('int64', data, [items.length, length])
}

/** Split a `[N, ...]` output back into N per-item views (no copies). */
export function split(tensor: Tensor): NumericArray[] {
  const [n, ...rest] = tensor.dims
  if (n === undefined) throw new RangeError('split() needs a tensor with a batch axis')
  const size = rest.reduce((a, b) => a * b, 1)
  const data = tensor.data as NumericArray
  return Array.from({ length: n }, (_, i) => data.subarray(i * size, (i + 1) * size) as NumericArray)
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
 * shapes, and so of compiled kernels, small).
 */
export function pad(
  TensorClass: TensorClass,
  items: readonly ArrayLike<number>[],
  options: { to?: 'longest' | readonly number[]; value?: number; side?: 'right' | 'left'; type?: 'float32' | 'int64' } = {},
): Padded {
  const lengths = items.map((item) => item.length)
  const longest = Math.max(0, ...lengths)
  const to = options.to ?? 'longest'
  let length = longest
  if (to !== 'longest') {
    const fit = [...to].sort((a, b) => a - b).find((size) => size >= longest)
    if (fit === undefined) throw new RangeError(`the longest item (${longest}) is longer than every allowed size (${to.join(', ')})`)
    length = fit
  }
  const value = options.value ?? 0
  const left = options.side === 'left'
  const type = options.type ?? 'float32'
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
