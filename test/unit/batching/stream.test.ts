import { afterEach, describe, expect, expectTypeOf, it } from 'vitest'
import { BatchHandlerError, batch, endOfStream, type StreamStep } from '../../../src/index.js'
import { flushQueue, passOwedLoopTurns } from '../../support/deferred.js'

// No test inherits the loop turns an earlier test's batches are owed (see passOwedLoopTurns).
afterEach(passOwedLoopTurns)

async function collect<R>(iterable: AsyncIterable<R>): Promise<R[]> {
  const out: R[] = []
  for await (const part of iterable) out.push(part)
  return out
}

/** Counts down from each item, ending each item's stream when it reaches zero. */
const countdown = batch.stream(
  async function* (starts: number[]): AsyncGenerator<StreamStep<number>> {
    const left = [...starts]
    while (left.some((n) => n > 0)) {
      yield left.map((n) => (n > 0 ? n : endOfStream))
      for (let i = 0; i < left.length; i++) left[i]! -= 1
      await new Promise((r) => setTimeout(r, 1))
    }
  },
  { maxBatchSize: 8 },
)

describe('batch.stream', () => {
  it('gives each caller its own partials, ending each stream when its item is done', async () => {
    const [a, b, c] = await Promise.all([collect(countdown(3)), collect(countdown(1)), collect(countdown(2))])
    expect(a).toEqual([3, 2, 1])
    expect(b).toEqual([1])
    expect(c).toEqual([2, 1])
  })

  it('a stream closed by its reader yields nothing more, not even partials it had buffered', async () => {
    // All three partials are yielded at once, before the reader reads any.
    const f = batch.stream(async function* (items: number[]): AsyncGenerator<StreamStep<number>> {
      for (let step = 1; step <= 3; step++) yield items.map(() => step)
    })
    const stream = f(0)
    expect(await stream.next()).toEqual({ value: 1, done: false })
    await flushQueue()
    expect(await stream.return!()).toEqual({ value: undefined, done: true })
    expect(await stream.next()).toEqual({ value: undefined, done: true })
  })

  it('a caller that stops iterating is freed: the handler sees it inactive, and a batch with nobody left stops', async () => {
    const activity: boolean[][] = []
    let closed = false
    const f = batch.stream(async function* (items: string[], info): AsyncGenerator<StreamStep<string>> {
      try {
        for (let step = 0; step < 1000; step++) {
          activity.push(items.map((_, i) => info.isActive(i)))
          yield items.map((item) => `${item}${step}`)
          await new Promise((r) => setTimeout(r, 1))
        }
      } finally {
        closed = true
      }
    })
    const first = f('x')
    const second = f('y')
    const got: string[] = []
    for await (const part of first) {
      got.push(part)
      if (got.length === 2) break
    }
    expect(got).toEqual(['x0', 'x1'])
    const fromSecond: string[] = []
    for await (const part of second) {
      fromSecond.push(part)
      if (fromSecond.length === 4) break
    }
    await new Promise((r) => setTimeout(r, 10))
    expect(closed).toBe(true) // the generator was closed once both readers left
    expect(activity).toContainEqual([false, true]) // the first reader left, the second read on
    expect(f.stats().batchesInFlight).toBe(0)
  })

  it('a step of endOfStream alone type-checks beside steps of partials, with no annotation or cast', async () => {
    // Each step's type is inferred: string[], then (typeof endOfStream)[]. The
    // second widened to symbol[] (not a StreamStep<string>) before R had a default.
    const shout = batch.stream(async function* (words: string[]) {
      yield words.map((word) => word.toUpperCase())
      yield words.map(() => endOfStream)
      yield words.map((word) => `never sent: ${word}`)
    })
    expectTypeOf(shout).returns.toEqualTypeOf<AsyncIterableIterator<string>>()
    expect(await Promise.all([collect(shout('a')), collect(shout('b'))])).toEqual([['A'], ['B']])
  })

  it('a yielded Error fails that caller only; a throw fails every open stream', async () => {
    const f = batch.stream(async function* (xs: number[]): AsyncGenerator<StreamStep<number>> {
      yield xs.map((x) => (x < 0 ? new RangeError('negative') : x))
      yield xs
      throw new Error('generator broke')
    })
    const [neg, pos] = [f(-1), f(1)]
    await expect(collect(neg)).rejects.toThrow('negative')
    const seen: number[] = []
    await expect(
      (async () => {
        for await (const x of pos) seen.push(x)
      })(),
    ).rejects.toThrow('generator broke')
    expect(seen).toEqual([1, 1])
  })

  it('a step of the wrong length fails every open stream with both lengths', async () => {
    const f = batch.stream(async function* (xs: number[]): AsyncGenerator<StreamStep<number>> {
      yield [...xs, 0]
    })
    const results = await Promise.allSettled([collect(f(1)), collect(f(2))])
    for (const r of results) {
      expect(r.status).toBe('rejected')
      const reason = (r as PromiseRejectedResult).reason as Error
      expect(reason).toBeInstanceOf(BatchHandlerError)
      expect(reason.message).toContain('yielded 3 partials for a batch of 2 items')
    }
  })

  it('a queued stream whose reader leaves never reaches the handler', async () => {
    const seen: number[] = []
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    const f = batch.stream(
      async function* (xs: number[]): AsyncGenerator<StreamStep<number>> {
        seen.push(...xs)
        await gate
        yield xs
      },
      { maxBatchSize: 1 },
    )
    const running = f(1)
    const first = running.next()
    await flushQueue()
    const queued = f(2)
    expect(f.stats().queueLength).toBe(1)
    await queued.return!()
    expect(f.stats().queueLength).toBe(0)
    release()
    expect(await first).toEqual({ value: 1, done: false })
    await running.return!()
    await new Promise((r) => setTimeout(r, 5))
    expect(seen).toEqual([1])
  })
})
