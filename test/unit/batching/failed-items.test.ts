import { afterEach, describe, expect, expectTypeOf, it, vi } from 'vitest'
import { BatchHandlerError, FailedItemsError, HTTPError, batch, endOfStream, errorJson, type StreamStep } from '../../../src/index.js'
import { deferred, passOwedLoopTurns } from '../../support/deferred.js'

// No test inherits the loop turns an earlier test's batches are owed (see passOwedLoopTurns).
afterEach(async () => {
  vi.restoreAllMocks()
  await passOwedLoopTurns()
})

/** Odd numbers are refused per item, as stack() refuses an item that does not fit. */
function refuseOdd(xs: number[]): number[] {
  const odd = xs.flatMap((x, i) => (x % 2 === 1 ? [[i, new HTTPError(422, `${x} is odd`)] as const] : []))
  if (odd.length > 0) throw new FailedItemsError(odd)
  return xs.map((x) => x * 10)
}

/** Settle calls of `f` made together (so they share a batch) and report each outcome as value or [status, message]. */
async function outcomes<T>(calls: Promise<T>[]): Promise<(T | [number | undefined, string])[]> {
  const settled = await Promise.allSettled(calls)
  return settled.map((r) => (r.status === 'fulfilled' ? r.value : [(r.reason as HTTPError).status, (r.reason as Error).message]))
}

describe('FailedItemsError: a handler names the items that failed', () => {
  it('fails exactly those callers with their own errors and runs the rest once more', async () => {
    const runs: number[][] = []
    const f = batch(
      async (xs: number[]) => {
        runs.push([...xs])
        return refuseOdd(xs)
      },
      { maxBatchSize: 8 },
    )
    const inputs = [2, 3, 4, 6, 9, 8]
    expect(await outcomes(inputs.map((x) => f(x)))).toEqual([20, [422, '3 is odd'], 40, 60, [422, '9 is odd'], 80])
    // One run of the whole batch, one of the rest, in order: not a bisection.
    expect(runs).toEqual([inputs, [2, 4, 6, 8]])
    expect(f.stats().batchesInFlight).toBe(0)
  })

  it("takes precedence over onBatchError: 'isolate' (no bisecting when the handler says which items failed)", async () => {
    const runs: number[][] = []
    const f = batch(
      async (xs: number[]) => {
        runs.push([...xs])
        return refuseOdd(xs)
      },
      { maxBatchSize: 8, onBatchError: 'isolate' },
    )
    expect(await outcomes([1, 2, 4, 6].map((x) => f(x)))).toEqual([[422, '1 is odd'], 20, 40, 60])
    expect(runs).toEqual([
      [1, 2, 4, 6],
      [2, 4, 6],
    ])
  })

  it('indexes the items of the re-run, and a caller that left before it is not run again', async () => {
    const runs: number[][] = []
    const gate = deferred()
    const controller = new AbortController()
    const f = batch(
      async (xs: number[]) => {
        runs.push([...xs])
        if (runs.length === 1) {
          await gate.promise
          throw new FailedItemsError([[0, new HTTPError(422, 'first is bad')]])
        }
        return xs.map((x) => x + 1)
      },
      { maxBatchSize: 8 },
    )
    const calls = [f(10), f(20, { signal: controller.signal }), f(30)]
    await vi.waitFor(() => expect(runs).toHaveLength(1))
    controller.abort()
    gate.resolve()
    const results = await Promise.allSettled(calls)
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'fulfilled'])
    expect(((results[0] as PromiseRejectedResult).reason as Error).message).toBe('first is bad')
    expect((results[2] as PromiseFulfilledResult<number>).value).toBe(31)
    expect(runs).toEqual([[10, 20, 30], [30]])
  })

  it('runs nothing more when every item failed', async () => {
    const handler = vi.fn(async (xs: number[]) => refuseOdd(xs))
    const f = batch(handler, { maxBatchSize: 8 })
    expect(await outcomes([1, 3].map((x) => f(x)))).toEqual([
      [422, '1 is odd'],
      [422, '3 is odd'],
    ])
    expect(handler).toHaveBeenCalledTimes(1)
  })

  it('fails the rest as any throwing batch does when the re-run throws', async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => {})
    let run = 0
    const f = batch(
      async (_xs: number[]) => {
        if (++run === 1) throw new FailedItemsError([[1, new HTTPError(422, 'bad')]])
        throw new Error('the model crashed')
      },
      { maxBatchSize: 8 },
    )
    const results = await Promise.allSettled([f(1), f(2), f(3)])
    expect(results.map((r) => ((r as PromiseRejectedResult).reason as Error).message)).toEqual(['the model crashed', 'bad', 'the model crashed'])
    expect(run).toBe(2)
    // Over HTTP the rest answer 500, and the log says why.
    expect(errorJson((results[0] as PromiseRejectedResult).reason)).toMatchObject({ status: 500, type: 'InternalServerError' })
    expect(log).toHaveBeenCalledWith(expect.any(String), expect.objectContaining({ message: 'the model crashed' }))
  })

  it('re-runs only once: items named again fail with their errors, the rest with a 500', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {})
    const runs: number[][] = []
    const f = batch(
      async (xs: number[]) => {
        runs.push([...xs])
        throw new FailedItemsError([[0, new HTTPError(422, `${xs[0]} is bad`)]])
      },
      { maxBatchSize: 8 },
    )
    const results = await outcomes([1, 2, 3].map((x) => f(x)))
    expect(runs).toEqual([
      [1, 2, 3],
      [2, 3],
    ])
    expect(results[0]).toEqual([422, '1 is bad'])
    expect(results[1]).toEqual([422, '2 is bad'])
    expect(results[2]).toEqual([undefined, 'the batched handler reported failed items again when re-run without those it reported first'])
  })

  it('refuses an index past the batch as a broken contract, failing the whole batch', async () => {
    const f = batch(
      async (): Promise<number[]> => {
        throw new FailedItemsError([[5, new HTTPError(422, 'bad')]])
      },
      { maxBatchSize: 8 },
    )
    const results = await Promise.allSettled([f(1), f(2)])
    for (const r of results) {
      expect((r as PromiseRejectedResult).reason).toBeInstanceOf(BatchHandlerError)
      expect(((r as PromiseRejectedResult).reason as Error).message).toMatch(/reported item 5 failed, but its batch has 2 items/)
    }
  })

  it('still lets a handler return an Error in an item slot', async () => {
    const f = batch(async (xs: number[]) => xs.map((x) => (x < 0 ? new HTTPError(422, 'negative') : x)), { maxBatchSize: 8 })
    expect(await outcomes([1, -1, 2].map((x) => f(x)))).toEqual([1, [422, 'negative'], 2])
  })

  it('maps @batch indices into the flattened items back to the callers whose lists hold them', async () => {
    const runs: number[][] = []
    class Doubler {
      @batch({ maxBatchSize: 8 })
      async handle(xs: number[]): Promise<number[]> {
        runs.push([...xs])
        return refuseOdd(xs)
      }
    }
    const doubler = new Doubler()
    const results = await outcomes([doubler.handle([2, 4]), doubler.handle([6, 7]), doubler.handle([8])])
    expect(results).toEqual([[20, 40], [422, '7 is odd'], [80]])
    expect(runs).toEqual([
      [2, 4, 6, 7, 8],
      [2, 4, 8],
    ])
  })
})

/** Every partial of a stream, then 'end', or the error it ended with as [status, message]. */
async function drain<T>(stream: AsyncIterable<T>): Promise<(T | 'end' | [number | undefined, string])[]> {
  const out: (T | 'end' | [number | undefined, string])[] = []
  try {
    for await (const part of stream) out.push(part)
    out.push('end')
  } catch (error) {
    out.push([(error as HTTPError).status, (error as Error).message])
  }
  return out
}

describe('FailedItemsError in streaming and continuous batches', () => {
  it('batch.stream: named before the first step, those fail and the stream starts again for the others', async () => {
    const runs: number[][] = []
    const f = batch.stream(
      async function* (xs: number[]): AsyncGenerator<StreamStep<number>> {
        runs.push([...xs])
        refuseOdd(xs)
        yield xs
        yield xs.map((x) => x + 1)
      },
      { maxBatchSize: 8 },
    )
    expect(await Promise.all([2, 3, 4].map((x) => drain(f(x))))).toEqual([[2, 3, 'end'], [[422, '3 is odd']], [4, 5, 'end']])
    expect(runs).toEqual([
      [2, 3, 4],
      [2, 4],
    ])
  })

  it('batch.stream: named after partials went out, those fail with their errors and the others with a 500, not re-run', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {})
    const runs: number[][] = []
    const f = batch.stream(
      async function* (xs: number[]): AsyncGenerator<StreamStep<number>> {
        runs.push([...xs])
        yield xs
        throw new FailedItemsError([[1, new HTTPError(422, 'bad later')]])
      },
      { maxBatchSize: 8 },
    )
    const [a, b] = await Promise.all([drain(f(1)), drain(f(2))])
    expect(b).toEqual([2, [422, 'bad later']])
    expect(a).toEqual([1, [undefined, 'the batched handler reported failed items after it had streamed partials, so the others could not be run again']])
    expect(runs).toHaveLength(1)
  })

  it('batch.continuous: items a step names fail alone, the others take the step again and go on', async () => {
    const steps: string[][] = []
    const f = batch.continuous(
      async (items: { id: string; n: number }[]) => {
        steps.push(items.map((item) => item.id))
        const bad = items.flatMap((item, i) => (item.id === 'bad' && item.n === 1 ? [[i, new HTTPError(422, 'bad at step 2')] as const] : []))
        if (bad.length > 0) throw new FailedItemsError(bad)
        return items.map((item) => (item.n === 3 ? endOfStream : `${item.id}${item.n++}`))
      },
      { maxBatchSize: 4 },
    )
    const results = await Promise.all(['a', 'bad', 'c'].map((id) => drain(f({ id, n: 0 }))))
    expect(results).toEqual([
      ['a0', 'a1', 'a2', 'end'],
      ['bad0', [422, 'bad at step 2']],
      ['c0', 'c1', 'c2', 'end'],
    ])
    expect(steps[1]).toEqual(['a', 'bad', 'c'])
    expect(steps[2]).toEqual(['a', 'c'])
  })
})

describe('FailedItemsError itself', () => {
  it('holds index -> error in index order, and says which items failed', () => {
    const error = new FailedItemsError(
      new Map([
        [7, new HTTPError(422, 'seven')],
        [2, new HTTPError(400, 'two')],
      ]),
    )
    expect([...error.errors.keys()]).toEqual([2, 7])
    expect(error.first?.message).toBe('two')
    expect(error.message).toBe('2 items of the batch failed: item 2: two; item 7: seven')
    expect(error).toBeInstanceOf(Error)
    expect(error.name).toBe('FailedItemsError')
  })

  it('answers over HTTP as its first item error when no queue takes it apart', () => {
    expect(errorJson(new FailedItemsError([[0, new HTTPError(422, 'item has 2 values, but shape [8] needs 8')]]))).toEqual({
      type: 'HTTPError',
      status: 422,
      message: 'item has 2 values, but shape [8] needs 8',
    })
  })

  it('refuses an index that is not an integer from 0, or an error that is not an Error', () => {
    expect(() => new FailedItemsError([[-1, new Error('x')]])).toThrow(/an item index must be an integer, 0 or more, received -1/)
    expect(() => new FailedItemsError([[1.5, new Error('x')]])).toThrow(TypeError)
    expect(() => new FailedItemsError([[0, 'bad' as unknown as Error]])).toThrow(/item 0's error must be an Error, received string/)
  })
})

describe('an Error a handler returns in a slot', () => {
  it("fails that caller and is not part of the caller's result type", async () => {
    const lengths = batch(async (texts: string[]) => texts.map((text) => (text.length > 3 ? new HTTPError(413, 'longer than 3 characters') : text.length)))
    expectTypeOf(lengths).returns.resolves.toEqualTypeOf<number>()
    expect(await lengths('abc')).toBe(3)
    await expect(lengths('abcd')).rejects.toMatchObject({ status: 413 })
  })
})
