/**
 * Cutting a model run along its batch axis, for a model held as several
 * instances (`loadModel`'s `instances`): each instance runs a slice of the
 * batch, and their outputs are joined back in order. Plain data in and out
 * (what crosses to a worker thread), no onnxruntime-web.
 */

export type TensorValues =
  Float32Array | Float64Array | Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array | BigInt64Array | BigUint64Array | string[]

/** A tensor as it crosses between threads. */
export interface WireTensor {
  type: string
  dims: readonly number[]
  data: TensorValues
}

export type WireFeeds = Record<string, WireTensor>

/** What a model says of one of its inputs or outputs (a `TensorInfo`). */
interface ValueInfo {
  name: string
  type: string | undefined
  shape: readonly (number | string)[]
}

/**
 * Why a model's runs cannot be cut into slices of its batch, or undefined
 * when they can: every input and output must be a tensor whose first axis is
 * symbolic (a name such as 'batch', or unknown), since a fixed first axis is
 * no batch.
 */
export function batchAxisProblem(inputs: readonly ValueInfo[], outputs: readonly ValueInfo[]): string | undefined {
  for (const [kind, list] of [
    ['input', inputs],
    ['output', outputs],
  ] as const) {
    for (const tensor of list) {
      if (tensor.type === undefined) return `${kind} '${tensor.name}' is not a tensor`
      const first = tensor.shape[0]
      if (first === undefined) return `${kind} '${tensor.name}' is a scalar`
      if (typeof first === 'number' && first > 0) return `${kind} '${tensor.name}' has a fixed first axis of ${first}`
    }
  }
  return undefined
}

/** The batch size every feed shares; throws if they disagree. */
export function batchSizeOf(feeds: WireFeeds): number {
  let size: number | undefined
  let first = ''
  for (const [name, tensor] of Object.entries(feeds)) {
    const n = tensor.dims[0]
    if (n === undefined) throw new RangeError(`feed '${name}' has no batch axis: a model held as several instances cuts every input along its first axis`)
    if (size === undefined) {
      size = n
      first = name
    } else if (n !== size) {
      throw new RangeError(`feeds disagree on the batch size: '${first}' has ${size} items, '${name}' has ${n}`)
    }
  }
  return size ?? 0
}

/** How `n` items are shared by `parts` instances: as evenly as may be, the larger shares first. */
export function shares(n: number, parts: number): number[] {
  const count = Math.max(1, Math.min(parts, n))
  const base = Math.floor(n / count)
  return Array.from({ length: count }, (_, i) => base + (i < n % count ? 1 : 0))
}

/**
 * The feeds cut into consecutive slices of `sizes` items. Each slice is a
 * copy with a buffer of its own, so that it can be moved to another thread
 * without taking the caller's tensors from it.
 */
export function sliceFeeds(feeds: WireFeeds, n: number, sizes: readonly number[]): WireFeeds[] {
  const slices: WireFeeds[] = sizes.map(() => ({}))
  for (const [name, tensor] of Object.entries(feeds)) {
    const perItem = n === 0 ? 0 : tensor.data.length / n
    let start = 0
    sizes.forEach((size, i) => {
      slices[i]![name] = { type: tensor.type, dims: [size, ...tensor.dims.slice(1)], data: tensor.data.slice(start * perItem, (start + size) * perItem) }
      start += size
    })
  }
  return slices
}

/** The slices' outputs joined along the batch axis, in order. One slice is returned as it is. */
export function joinOutputs(parts: readonly WireFeeds[]): WireFeeds {
  const [first, ...rest] = parts
  if (first === undefined) throw new RangeError('joinOutputs() needs at least one part')
  if (rest.length === 0) return first
  const joined: WireFeeds = {}
  for (const [name, head] of Object.entries(first)) {
    const pieces = parts.map((part, i) => {
      const piece = part[name]
      if (piece === undefined) throw new Error(`instance ${i} returned no output '${name}'`)
      if (piece.dims.length !== head.dims.length || piece.dims.some((d, axis) => axis > 0 && d !== head.dims[axis])) {
        throw new Error(
          `output '${name}' has shape [${piece.dims.join(', ')}] from instance ${i} but [${head.dims.join(', ')}] from instance 0: it cannot be joined along its first axis`,
        )
      }
      return piece
    })
    const items = pieces.reduce((sum, piece) => sum + piece.dims[0]!, 0)
    joined[name] = { type: head.type, dims: [items, ...head.dims.slice(1)], data: concat(pieces.map((piece) => piece.data)) }
  }
  return joined
}

function concat(arrays: TensorValues[]): TensorValues {
  const [first] = arrays
  if (Array.isArray(first)) return (arrays as string[][]).flat()
  const typed = arrays as Exclude<TensorValues, string[]>[]
  const length = typed.reduce((sum, a) => sum + a.length, 0)
  const out = new (first!.constructor as new (length: number) => Exclude<TensorValues, string[]>)(length)
  let offset = 0
  for (const a of typed) {
    // Every part of one output has the same element type.
    ;(out as Float32Array).set(a as Float32Array, offset)
    offset += a.length
  }
  return out
}
