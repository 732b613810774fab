import { describe, expect, expectTypeOf, it } from 'vitest'
import { BatchHandlerError, batch, endOfStream } from '../../../src/index.js'

/** A sequence that counts up to `length`: its state lives in the item. */
interface Counter {
  id: string
  length: number
  emitted: number
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 2))

function counter(id: string, length: number): Counter {
  return { id, length, emitted: 0 }
}

function makeCounting(maxBatchSize: number, log: string[][] = []) {
  return batch.continuous(
    async (items: Counter[]) => {
      log.push(items.map((c) => c.id))
      await tick()
      return items.map((c) => (c.emitted >= c.length ? endOfStream : `${c.id}${c.emitted++}`))
    },
    { maxBatchSize },
  )
}

async function collect(iterable: AsyncIterable<string>, onPart?: (part: string) => void): Promise<string[]> {
  const out: string[] = []
  for await (const part of iterable) {
    out.push(part)
    onPart?.(part)
  }
  return out
}

describe('batch.continuous', () => {
  it('a short request sent while a long one runs joins at the next step and finishes first', async () => {
    const log: string[][] = []
    const count = makeCounting(4, log)
    const events: string[] = []
    const long = collect(count(counter('L', 30)), (p) => events.push(p))
    await tick()
    await tick()
    const short = collect(count(counter('S', 2)), (p) => events.push(p))
    const [longOut, shortOut] = await Promise.all([long, short])
    expect(shortOut).toEqual(['S0', 'S1'])
    expect(longOut).toEqual(Array.from({ length: 30 }, (_, i) => `L${i}`))
    expect(events.indexOf('S0')).toBeLessThan(events.indexOf('L29')) // first token before the long one ends
    expect(events.indexOf('S1')).toBeLessThan(events.indexOf('L29'))
    expect(log.some((ids) => ids.includes('L') && ids.includes('S'))).toBe(true) // they shared steps
    expect(count.stats().batchesRun).toBe(1) // one loop served both
  })

  it('each output equals running that item alone', async () => {
    const together = makeCounting(8)
    const alone = makeCounting(8)
    const lengths = [5, 1, 7, 3, 0, 4]
    const mixed = await Promise.all(lengths.map((n, i) => collect(together(counter(`c${i}`, n)))))
    for (let i = 0; i < lengths.length; i++) {
      expect(mixed[i]).toEqual(await collect(alone(counter(`c${i}`, lengths[i]!))))
    }
  })

  it('never has more than maxBatchSize active; waiting calls join as others finish', async () => {
    const log: string[][] = []
    const count = makeCounting(2, log)
    const outs = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((id, i) => collect(count(counter(id, 2 + i)))))
    expect(outs.map((o) => o.length)).toEqual([2, 3, 4, 5, 6])
    expect(Math.max(...log.map((ids) => ids.length))).toBe(2)
    expect(count.stats()).toMatchObject({ queueLength: 0, batchesInFlight: 0, itemsRun: 5 })
  })

  it('a reader that stops frees its slot for a waiting call', async () => {
    const log: string[][] = []
    const count = makeCounting(1, log)
    const endless = count(counter('E', 1_000_000))
    const first = await endless.next()
    expect(first.value).toBe('E0')
    const waiting = collect(count(counter('W', 2)))
    await tick()
    await endless.return!()
    expect(await waiting).toEqual(['W0', 'W1'])
    expect(log.at(-1)).toEqual(['W'])
  })

  it('a step that returns endOfStream for every item on one path type-checks with no annotation or cast', async () => {
    // Each return's type is inferred: (typeof endOfStream)[] widened to symbol[]
    // (not a StreamStep<string>) before R had a default.
    let budget = 3
    const f = batch.continuous(async (xs: string[]) => {
      if (budget-- === 0) return xs.map(() => endOfStream) // out of budget: every stream ends
      return xs.map((x) => `${x}${budget}`)
    })
    expectTypeOf(f).returns.toEqualTypeOf<AsyncIterableIterator<string>>()
    expect(await collect(f('a'))).toEqual(['a2', 'a1', 'a0'])
  })

  it('a step that throws or returns the wrong length fails the active items; later calls are served', async () => {
    let mode: 'throw' | 'short' | 'ok' = 'throw'
    const f = batch.continuous(async (xs: Counter[]) => {
      if (mode === 'throw') throw new Error('step failed')
      if (mode === 'short') return []
      return xs.map((x) => (x.emitted++ < x.length ? 'x' : endOfStream))
    })
    await expect(collect(f(counter('a', 1)))).rejects.toThrow('step failed')
    mode = 'short'
    await expect(collect(f(counter('b', 1)))).rejects.toBeInstanceOf(BatchHandlerError)
    mode = 'ok'
    await expect(collect(f(counter('c', 2)))).resolves.toEqual(['x', 'x'])
  })
})
