import { describe, expect, it } from 'vitest'
import { FailedItemsError, HTTPError, errorJson } from '../../../src/index.js'
import { pad, stack, stackInt64 } from '../../../src/onnx/node.js'

/** The per-item errors a tensor helper threw, as index -> [status, message]; fails the test if it threw anything else. */
function itemErrors(build: () => unknown): Record<number, [number, string]> {
  try {
    build()
  } catch (error) {
    expect(error).toBeInstanceOf(FailedItemsError)
    const out: Record<number, [number, string]> = {}
    for (const [index, itemError] of (error as FailedItemsError).errors) {
      expect(itemError).toBeInstanceOf(HTTPError)
      out[index] = [(itemError as HTTPError).status, itemError.message]
    }
    return out
  }
  throw new Error('expected the helper to throw')
}

const row = (n: number) => Array.from({ length: n }, (_, i) => i + 0.5)

describe('stack() checks each item against the shape', () => {
  it('names only the items that do not fit, each with a 422 naming the shape it needs and what it got', () => {
    const rows = [row(8), row(8), row(2), row(8), row(9), new Float32Array(8)]
    expect(itemErrors(() => stack(rows, [8]))).toEqual({
      2: [422, 'item has 2 values, but shape [8] needs 8'],
      4: [422, 'item has 9 values, but shape [8] needs 8'],
    })
    expect(itemErrors(() => stack([row(6)], [2, 4]))).toEqual({ 0: [422, 'item has 6 values, but shape [2, 4] needs 8'] })
  })

  it('refuses what is not a list of numbers, which a typed array would quietly turn into NaN', () => {
    const items = [
      undefined,
      'abcdefgh',
      [1, 2, 3, '4', 5, 6, 7, 8],
      { features: row(8) },
      [1, 2, 3, 4, 5, 6, 7, [8]],
      new BigInt64Array(8),
      new DataView(new ArrayBuffer(32)),
    ]
    const errors = itemErrors(() => stack(items as unknown as number[][], [8]))
    expect(errors).toEqual({
      0: [422, 'item is not a list of numbers (received undefined); shape [8] needs 8 numbers'],
      1: [422, 'item is not a list of numbers (received a string of 8 characters); shape [8] needs 8 numbers'],
      2: [422, 'item has a value that is not a number at [3] (received a string of 1 character); shape [8] needs 8 numbers'],
      3: [422, 'item is not a list of numbers (received an object); shape [8] needs 8 numbers'],
      4: [422, 'item has a value that is not a number at [7] (received an array); shape [8] needs 8 numbers'],
      5: [422, 'item is a BigInt64Array, not a list of numbers; shape [8] needs 8 numbers'],
      6: [422, 'item is a DataView, not a list of numbers; shape [8] needs 8 numbers'],
    })
  })

  it('refuses a number the tensor cannot hold as it is, which a typed array would quietly change', () => {
    const full = (value: number) => [value, ...row(7)]
    // JSON's 1e400 parses to Infinity, and 1e39 is finite but past float32's range: either would reach the model as Infinity.
    expect(itemErrors(() => stack([full(JSON.parse('1e400') as number), full(-1e39), full(3e38), full(Number.NaN)], [8]))).toEqual({
      0: [422, 'item has a value that float32 cannot hold at [0] (received Infinity); shape [8] needs 8 numbers'],
      1: [422, 'item has a value that float32 cannot hold at [0] (received -1e+39); shape [8] needs 8 numbers'],
    })
    expect(
      itemErrors(() =>
        stack(
          [
            [1, 2.5],
            [2 ** 31, 0],
            [-(2 ** 31), 7],
          ],
          [2],
          'int32',
        ),
      ),
    ).toEqual({
      0: [422, 'item has a value that is not an integer at [1] (received 2.5); shape [2] needs 2 numbers'],
      1: [422, "item has a value outside int32's range at [0] (received 2147483648); shape [2] needs 2 numbers"],
    })
    expect(itemErrors(() => stackInt64([[2 ** 63], [2n ** 63n], [-(2n ** 63n)]] as unknown as number[][], 1))).toEqual({
      0: [422, "item has a value outside int64's range at [0] (received 9223372036854776000); shape [1] needs 1 integer ids"],
      1: [422, "item has a value outside int64's range at [0] (received 9223372036854775808n); shape [1] needs 1 integer ids"],
    })
  })

  it('stacks items that fit exactly as before, typed arrays included', () => {
    const t = stack([row(8), new Float32Array(row(8))], [8])
    expect(t.dims).toEqual([2, 8])
    expect(Array.from(t.data as Float32Array)).toEqual([...row(8), ...row(8)])
    expect(stack([[1, 2]], [2], 'int32').type).toBe('int32')
  })

  it('outside a batch (one caller), answers as that item: a 422 with the shape in its message', () => {
    let thrown: unknown
    try {
      stack([[1, 2]], [8])
    } catch (error) {
      thrown = error
    }
    expect(errorJson(thrown)).toEqual({ type: 'HTTPError', status: 422, message: 'item has 2 values, but shape [8] needs 8' })
  })
})

describe('stackInt64() and pad() fail the items that do not fit, alone', () => {
  it('stackInt64(): wrong length, fractions and non-lists', () => {
    const items = [[1, 2, 3], [1, 2], [1, 2.5, 3], null, new BigInt64Array([1n, 2n, 3n])]
    expect(itemErrors(() => stackInt64(items as number[][], 3))).toEqual({
      1: [422, 'item has 2 ids, but shape [3] needs 3'],
      2: [422, 'item has a value that is not an integer at [1] (received 2.5); shape [3] needs 3 integer ids'],
      3: [422, 'item is not a list of integer ids (received null); shape [3] needs 3 integer ids'],
    })
  })

  it('pad(): an item longer than every allowed size, or not a list of numbers', () => {
    expect(itemErrors(() => pad([row(3), row(9), row(1)], { to: [4, 8] }))).toEqual({
      1: [422, 'item has 9 values, more than every allowed size (4, 8)'],
    })
    expect(itemErrors(() => pad([row(3), [1, 'x']] as number[][]))).toEqual({
      1: [422, 'item has a value that is not a number at [1] (received a string of 1 character)'],
    })
    expect(itemErrors(() => pad([[1, 2.5]], { type: 'int64' }))).toEqual({
      0: [422, 'item has a value that is not an integer at [1] (received 2.5)'],
    })
    const fits = pad([row(3), row(1)], { to: [4, 8] })
    expect(fits.tensor.dims).toEqual([2, 4])
  })
})
