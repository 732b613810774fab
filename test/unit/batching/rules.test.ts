import { afterEach, describe, expect, it, vi } from 'vitest'
import { BackPressureError, BatchHandlerError, RequestCancelledError, RequestTimeoutError, batch } from '../../../src/index.js'
import { MAX_BATCHES_PER_TURN, TURN_BUDGET_MS, YIELD_TURNS_MAX } from '../../../src/batching/scheduler.js'
import { deferred, flushQueue, holdThread, passOwedLoopTurns, useFakeTime } from '../../support/deferred.js'

/** A batch that holds the thread past the turn's budget, as a model run does: the loop must turn after it. */
const LONG_BATCH_MS = TURN_BUDGET_MS + 1

/** A handler that records each batch it sees and can be held open. */
function recorder<T, R>(compute: (items: T[]) => (R | Error)[]) {
  const batches: T[][] = []
  let gate: Promise<void> | undefined
  const handler = async (items: T[]) => {
    batches.push([...items])
    if (gate) await gate
    return compute(items)
  }
  return {
    batches,
    handler,
    hold() {
      const d = deferred()
      gate = d.promise
      return () => {
        gate = undefined
        d.resolve()
      }
    },
  }
}

// No test inherits the loop turns an earlier test's batches are owed (see passOwedLoopTurns).
afterEach(async () => {
  vi.useRealTimers()
  await passOwedLoopTurns()
})

describe("Ray Serve's batching tutorial", () => {
  it('9 concurrent calls with maxBatchSize 4 give 1..9 in order, in batches of at most 4', async () => {
    const sizes: number[] = []
    class BatchAdder {
      handleBatch = batch(
        async (numbers: number[]) => {
          sizes.push(numbers.length)
          await new Promise((r) => setTimeout(r, 5)) // the model's work holds the queue
          return numbers.map((n) => n + 1)
        },
        { maxBatchSize: 4 },
      )
    }
    const adder = new BatchAdder()
    const results = await Promise.all(Array.from({ length: 9 }, (_, i) => adder.handleBatch(i)))
    expect(results).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9])
    expect(Math.max(...sizes)).toBeLessThanOrEqual(4)
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(9)
    expect(sizes.length).toBeGreaterThanOrEqual(3)
  })
})

describe('one queue per (instance, method)', () => {
  it('two instances never share a batch', async () => {
    const seen: string[][] = []
    class Tagger {
      constructor(readonly tag: string) {}
      handle = batch(async (xs: number[]) => {
        seen.push(xs.map((x) => `${this.tag}${x}`))
        return xs.map((x) => `${this.tag}${x}`)
      })
    }
    const a = new Tagger('a')
    const b = new Tagger('b')
    const out = await Promise.all([a.handle(1), b.handle(2), a.handle(3), b.handle(4)])
    expect(out).toEqual(['a1', 'b2', 'a3', 'b4'])
    for (const group of seen) expect(new Set(group.map((s) => s[0])).size).toBe(1)
  })
})

describe('opportunistic by default', () => {
  it('runs the first item of an idle queue without any timer', async () => {
    await useFakeTime()
    const rec = recorder((xs: number[]) => xs)
    const f = batch(rec.handler, { maxBatchSize: 8 })
    const p = f(1)
    await flushQueue()
    expect(rec.batches).toEqual([[1]]) // no timer advanced
    await expect(p).resolves.toBe(1)
  })

  it('items that arrive while a batch runs form the next batch', async () => {
    const rec = recorder((xs: number[]) => xs)
    const f = batch(rec.handler, { maxBatchSize: 8 })
    const release = rec.hold()
    const first = f(0)
    await flushQueue()
    const rest = [1, 2, 3].map((x) => f(x))
    await flushQueue()
    expect(rec.batches).toEqual([[0]])
    release()
    await Promise.all([first, ...rest])
    expect(rec.batches).toEqual([[0], [1, 2, 3]])
  })

  it('calls that arrive in one round of I/O while a CPU-bound batch blocked the thread share the next batch', async () => {
    const batches: number[][] = []
    const later: Promise<number>[] = []
    const f = batch(
      async (xs: number[]) => {
        batches.push(xs)
        if (batches.length === 1) {
          // Four arrivals, each its own macrotask (as separate requests are),
          // all ready while this batch blocks the thread.
          for (const x of [1, 2, 3, 4]) later.push(new Promise((resolve) => setTimeout(() => resolve(f(x)), 0)))
          holdThread(30)
        }
        return xs
      },
      { maxBatchSize: 8 },
    )
    await f(0)
    await new Promise((resolve) => setTimeout(resolve, 10))
    await Promise.all(later)
    expect(batches).toEqual([[0], [1, 2, 3, 4]])
  })

  it('a queue of full batches that block the thread still lets the event loop turn between them', async () => {
    // Twenty calls queued at once, one per batch, each batch holding the thread
    // as a model run does: the I/O waiting meanwhile (here a macrotask, in a
    // server the next requests of kept-alive connections) must be read after
    // a batch, not after the whole queue.
    const started: number[] = []
    const f = batch(
      async (xs: number[]) => {
        started.push(xs[0]!)
        holdThread(LONG_BATCH_MS)
        return xs
      },
      { maxBatchSize: 1 },
    )
    await passOwedLoopTurns() // no turns owed to the last test's batches
    let batchesBeforeIo = -1
    setImmediate(() => (batchesBeforeIo = started.length))
    await Promise.all(Array.from({ length: 20 }, (_, i) => f(i)))
    expect(started).toHaveLength(20)
    expect(batchesBeforeIo).toBeGreaterThanOrEqual(1)
    expect(batchesBeforeIo).toBeLessThanOrEqual(2)
  })

  it('a pipeline of stages that block the thread lets the event loop turn between stages', async () => {
    // Each call goes on to the next stage with what the last returned, on promise jobs only,
    // as a pipeline of deployments does in one process: the loop must still turn between stages.
    const hold = () => holdThread(LONG_BATCH_MS)
    const stages: string[] = []
    const detect = batch(async (xs: number[]) => (stages.push('detect'), hold(), xs), { maxBatchSize: 1 })
    const recognize = batch(async (xs: number[]) => (stages.push('recognize'), hold(), xs), { maxBatchSize: 1 })
    await passOwedLoopTurns() // no turns owed to the last test's batches
    let stagesBeforeIo = -1
    setImmediate(() => (stagesBeforeIo = stages.length))
    await Promise.all(Array.from({ length: 10 }, async (_, i) => recognize(await detect(i))))
    expect(stages).toHaveLength(20)
    expect(stagesBeforeIo).toBeGreaterThanOrEqual(1)
    expect(stagesBeforeIo).toBeLessThanOrEqual(2)
  })

  it('partial batches of two queues that block the thread start in different turns', async () => {
    // Each queue's pump waits for a loop turn; two pumps due in the same turn
    // must not run two long batches back to back while I/O waits.
    const hold = () => holdThread(LONG_BATCH_MS)
    const started: string[] = []
    const a = batch(async (xs: number[]) => (started.push('a'), hold(), xs), { maxBatchSize: 8 })
    const b = batch(async (xs: number[]) => (started.push('b'), hold(), xs), { maxBatchSize: 8 })
    await passOwedLoopTurns()
    const done = Promise.all([a(1), b(2)])
    let batchesBeforeIo = -1
    setImmediate(() => (batchesBeforeIo = started.length)) // queued after both pumps
    await done
    expect(started).toEqual(['a', 'b'])
    expect(batchesBeforeIo).toBe(1)
  })

  it("a queue of cheap full batches runs them back to back, bounded by the turn's time alone", async () => {
    // No-op batches hold the thread for microseconds: a loop turn each would
    // cost more than the batches. Node's clock runs while code does, so the
    // turn's time budget bounds them, and no count turns the loop every few
    // batches (on Workers it does: deployed, their clock stands still, see
    // test/workers/workerd.test.ts). With the clock held still here, every
    // batch starts before the loop turns.
    const batches = MAX_BATCHES_PER_TURN * 4
    const started: number[] = []
    const f = batch(async (xs: number[]) => (started.push(xs[0]!), xs), { maxBatchSize: 1 })
    await passOwedLoopTurns() // no turns owed to the last test's batches
    vi.useFakeTimers({ toFake: ['performance'] })
    let batchesBeforeIo: number | undefined
    setImmediate(() => (batchesBeforeIo = started.length))
    await Promise.all(Array.from({ length: batches }, (_, i) => f(i)))
    expect(started).toHaveLength(batches)
    expect(batchesBeforeIo ?? started.length).toBe(batches)
  })

  it('full batches that hold the thread start on promise jobs only until the turn has held it for its budget', async () => {
    // Each batch holds the thread for 0.4 of the turn's budget: at most three
    // start (at 0, 0.4 and 0.8 of it) before the loop must turn.
    const holdMs = TURN_BUDGET_MS * 0.4
    const started: number[] = []
    const f = batch(async (xs: number[]) => (started.push(xs[0]!), holdThread(holdMs), xs), { maxBatchSize: 1 })
    await passOwedLoopTurns()
    let batchesBeforeIo = -1
    setImmediate(() => (batchesBeforeIo = started.length))
    await Promise.all(Array.from({ length: 10 }, (_, i) => f(i)))
    expect(started).toHaveLength(10)
    expect(batchesBeforeIo).toBeGreaterThanOrEqual(1)
    expect(batchesBeforeIo).toBeLessThanOrEqual(3)
  })

  it('after a batch that held the thread, the loop turns about once per millisecond held before the next batch', async () => {
    // Node accepts one new connection per loop turn: a server whose turns each
    // run a long batch would accept a burst of clients one batch at a time.
    const HELD_MS = 8
    let turnsWhenSecondStarted = -1
    let turns = 0
    const f = batch(
      async (xs: number[]) => {
        if (xs[0] === 0) {
          setImmediate(function count() {
            turns++
            if (turnsWhenSecondStarted < 0) setImmediate(count)
          })
          holdThread(HELD_MS)
        } else turnsWhenSecondStarted = turns
        return xs
      },
      { maxBatchSize: 1 },
    )
    await passOwedLoopTurns()
    await Promise.all([f(0), f(1)])
    expect(turnsWhenSecondStarted).toBeGreaterThanOrEqual(HELD_MS)
    expect(turnsWhenSecondStarted).toBeLessThanOrEqual(YIELD_TURNS_MAX + 2)
  })

  it('a lone full batch still starts without waiting for the event loop', async () => {
    // The loop has turned since any earlier batch: the call needs no macrotask to start.
    await passOwedLoopTurns()
    let started = false
    const f = batch(async (xs: number[]) => ((started = true), xs), { maxBatchSize: 1 })
    void f(1)
    await Promise.resolve()
    await Promise.resolve()
    expect(started).toBe(true)
  })

  it('calls made in the same tick share a batch', async () => {
    const rec = recorder((xs: number[]) => xs)
    const f = batch(rec.handler, { maxBatchSize: 8 })
    await Promise.all([1, 2, 3].map((x) => f(x)))
    expect(rec.batches).toEqual([[1, 2, 3]])
  })
})

describe('the wait timer starts when the first item of the next batch is taken', () => {
  it('waits batchWaitTimeoutS after the first item, then runs a partial batch', async () => {
    await useFakeTime()
    const rec = recorder((xs: number[]) => xs)
    const f = batch(rec.handler, { maxBatchSize: 4, batchWaitTimeoutS: 0.1 })
    const p1 = f(1)
    await vi.advanceTimersByTimeAsync(60)
    const p2 = f(2)
    await vi.advanceTimersByTimeAsync(39)
    expect(rec.batches).toEqual([])
    await vi.advanceTimersByTimeAsync(1)
    expect(rec.batches).toEqual([[1, 2]])
    await expect(Promise.all([p1, p2])).resolves.toEqual([1, 2])
  })

  it('starts the timer when a slot frees, not when the item arrived', async () => {
    await useFakeTime()
    const rec = recorder((xs: number[]) => xs)
    const f = batch(rec.handler, { maxBatchSize: 4, batchWaitTimeoutS: 0.1 })
    const release = rec.hold()
    const p0 = [f(0), f(1), f(2), f(3)] // full: runs at once and holds the slot
    await flushQueue()
    expect(rec.batches).toEqual([[0, 1, 2, 3]])
    const p1 = f(10) // arrives while the slot is busy
    await vi.advanceTimersByTimeAsync(500)
    expect(rec.batches.length).toBe(1)
    release()
    await Promise.all(p0)
    await vi.advanceTimersByTimeAsync(99)
    expect(rec.batches.length).toBe(1) // 99 ms after the slot freed: still waiting
    await vi.advanceTimersByTimeAsync(1)
    expect(rec.batches).toEqual([[0, 1, 2, 3], [10]])
    await expect(p1).resolves.toBe(10)
  })
})

describe('a full batch is dispatched without waiting out the timer', () => {
  it('runs as soon as maxBatchSize items are queued', async () => {
    await useFakeTime()
    const rec = recorder((xs: number[]) => xs)
    const f = batch(rec.handler, { maxBatchSize: 3, batchWaitTimeoutS: 10 })
    const ps = [f(1), f(2)]
    await vi.advanceTimersByTimeAsync(5)
    expect(rec.batches).toEqual([])
    ps.push(f(3))
    await flushQueue()
    expect(rec.batches).toEqual([[1, 2, 3]])
    await expect(Promise.all(ps)).resolves.toEqual([1, 2, 3])
  })
})

describe('results are matched by position', () => {
  it('a returned Error in slot i fails caller i only', async () => {
    const f = batch(async (xs: number[]) => xs.map((x) => (x === 2 ? new RangeError('two is bad') : x * 10)))
    const results = await Promise.allSettled([f(1), f(2), f(3)])
    expect(results[0]).toEqual({ status: 'fulfilled', value: 10 })
    expect(results[1]).toMatchObject({ status: 'rejected', reason: { message: 'two is bad' } })
    expect(results[2]).toEqual({ status: 'fulfilled', value: 30 })
  })

  it('a wrong-length result fails the whole batch, saying both lengths, and the queue goes on', async () => {
    let calls = 0
    const f = batch(async (xs: number[]) => (++calls === 1 ? xs.slice(1) : xs))
    const results = await Promise.allSettled([f(1), f(2), f(3)])
    for (const r of results) {
      expect(r.status).toBe('rejected')
      const reason = (r as PromiseRejectedResult).reason as Error
      expect(reason).toBeInstanceOf(BatchHandlerError)
      expect(reason.message).toContain('returned 2 results for a batch of 3 items')
    }
    await expect(f(4)).resolves.toBe(4)
  })

  it('a non-array result fails the batch with a clear message', async () => {
    const f = batch(async () => 'oops' as unknown as number[])
    await expect(f(1)).rejects.toThrow(/must return an array .* returned string/)
  })

  it('a throw fails every caller of that batch with the thrown error, and the queue goes on', async () => {
    let calls = 0
    const f = batch(async (xs: number[]) => {
      if (++calls === 1) throw new Error('model crashed')
      return xs
    })
    const results = await Promise.allSettled([f(1), f(2)])
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected'])
    expect(((results[0] as PromiseRejectedResult).reason as Error).message).toBe('model crashed')
    await expect(f(3)).resolves.toBe(3)
  })
})

describe('a caller that gives up while queued leaves at once', () => {
  it('an aborted signal removes the item; the handler never sees it; its slot is free', async () => {
    const rec = recorder((xs: number[]) => xs)
    const f = batch(rec.handler, { maxBatchSize: 2, maxQueuedRequests: 1 })
    const release = rec.hold()
    const running = f(0)
    await flushQueue()
    const controller = new AbortController()
    const queued = f(1, { signal: controller.signal })
    expect(f.stats().queueLength).toBe(1)
    controller.abort()
    await expect(queued).rejects.toBeInstanceOf(RequestCancelledError)
    expect(f.stats().queueLength).toBe(0)
    const replacement = f(2) // the slot is free again: no BackPressureError
    release()
    await expect(Promise.all([running, replacement])).resolves.toEqual([0, 2])
    expect(rec.batches.flat()).not.toContain(1)
  })

  it('an already aborted signal is refused before it is queued', async () => {
    const rec = recorder((xs: number[]) => xs)
    const f = batch(rec.handler)
    await expect(f(1, { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(RequestCancelledError)
    expect(rec.batches).toEqual([])
  })

  it('a passed deadline removes the item at that moment', async () => {
    await useFakeTime()
    const rec = recorder((xs: number[]) => xs)
    const f = batch(rec.handler, { maxBatchSize: 4 })
    const release = rec.hold()
    const running = f(0)
    await flushQueue()
    const late = f(1, { deadline: Date.now() + 50 })
    const patient = f(2, { deadline: Date.now() + 5000 })
    const outcome = late.catch((e: unknown) => e)
    await vi.advanceTimersByTimeAsync(49)
    expect(f.stats().queueLength).toBe(2)
    await vi.advanceTimersByTimeAsync(1)
    expect(await outcome).toBeInstanceOf(RequestTimeoutError)
    expect(f.stats().queueLength).toBe(1)
    release()
    await expect(Promise.all([running, patient])).resolves.toEqual([0, 2])
    expect(rec.batches.flat()).not.toContain(1)
  })

  it('each queued call times out at its own deadline, whatever order the deadlines arrive in', async () => {
    // The queue watches deadlines with one timer: a call with an earlier
    // deadline than the one armed must re-arm it, and each expiry must arm
    // it again for the next deadline.
    await useFakeTime()
    const rec = recorder((xs: number[]) => xs)
    const f = batch(rec.handler, { maxBatchSize: 4 })
    const release = rec.hold()
    const running = f(0)
    await flushQueue()
    const start = Date.now()
    const last = f(1, { deadline: start + 300 }).catch((e: unknown) => e)
    const first = f(2, { deadline: start + 100 }).catch((e: unknown) => e)
    const second = f(3, { deadline: start + 200 }).catch((e: unknown) => e)
    const settled = new Set<number>()
    for (const [item, outcome] of [
      [1, last],
      [2, first],
      [3, second],
    ] as const)
      void outcome.then(() => settled.add(item))

    // Which calls have settled is checked before awaiting one, so a call
    // that missed its deadline fails the test here rather than hanging it.
    await vi.advanceTimersByTimeAsync(100)
    expect([...settled]).toEqual([2])
    expect(await first).toBeInstanceOf(RequestTimeoutError)
    await vi.advanceTimersByTimeAsync(100)
    expect([...settled].sort()).toEqual([2, 3])
    expect(await second).toBeInstanceOf(RequestTimeoutError)
    await vi.advanceTimersByTimeAsync(100)
    expect([...settled].sort()).toEqual([1, 2, 3])
    expect(await last).toBeInstanceOf(RequestTimeoutError)
    expect(f.stats().queueLength).toBe(0)
    release()
    await expect(running).resolves.toBe(0)
    expect(rec.batches.flat()).toEqual([0])
  })

  it('a deadline already past is refused at once', async () => {
    const f = batch(async (xs: number[]) => xs)
    await expect(f(1, { deadline: Date.now() - 1 })).rejects.toBeInstanceOf(RequestTimeoutError)
  })

  it('when every caller of a running batch has gone, the slot is freed and the handler is told', async () => {
    await useFakeTime()
    let seenSignal: AbortSignal | undefined
    const hung = deferred<number[]>()
    let calls = 0
    const f = batch(async (xs: number[], info) => {
      if (++calls === 1) {
        seenSignal = info.signal
        return hung.promise // never resolves on its own
      }
      return xs
    })
    const stuck = f(1, { deadline: Date.now() + 100 })
    const outcome = stuck.catch((e: unknown) => e)
    await vi.advanceTimersByTimeAsync(100)
    expect(await outcome).toBeInstanceOf(RequestTimeoutError)
    expect(seenSignal?.aborted).toBe(true)
    expect(f.stats().batchesInFlight).toBe(0)
    await expect(f(2)).resolves.toBe(2) // the queue serves again
    hung.resolve([1]) // a late result goes nowhere
    await flushQueue()
  })
})

describe('a full queue rejects at once', () => {
  it('throws BackPressureError beyond maxQueuedRequests without waiting', async () => {
    const rec = recorder((xs: number[]) => xs)
    const f = batch(rec.handler, { maxBatchSize: 1, maxQueuedRequests: 2 })
    const release = rec.hold()
    const running = f(0)
    await flushQueue()
    const waiting = [f(1), f(2)]
    const refused = f(3)
    await expect(refused).rejects.toBeInstanceOf(BackPressureError)
    await expect(refused).rejects.toThrow(/2 requests are waiting \(maxQueuedRequests: 2\)/)
    release()
    await expect(Promise.all([running, ...waiting])).resolves.toEqual([0, 1, 2])
  })
})

describe('batchKey', () => {
  it('items with different keys never share a batch, and the handler knows the key', async () => {
    const seen: { key: string | undefined; items: string[] }[] = []
    const f = batch(
      async (words: string[], info) => {
        seen.push({ key: info.key, items: words })
        return words.map((w) => w.toUpperCase())
      },
      { maxBatchSize: 10, batchKey: (word) => String(word.length) },
    )
    const words = ['a', 'bb', 'c', 'dd', 'eee', 'f']
    await expect(Promise.all(words.map((w) => f(w)))).resolves.toEqual(words.map((w) => w.toUpperCase()))
    for (const { key, items } of seen) {
      expect(new Set(items.map((w) => w.length))).toEqual(new Set([Number(key)]))
    }
    expect(seen.map((s) => s.key).sort()).toEqual(['1', '2', '3'])
  })

  it('among partial batches, the key whose oldest call waited longest goes first', async () => {
    const order: string[] = []
    const gate = deferred()
    const f = batch(
      async (words: string[]) => {
        order.push(...words)
        if (order.length === 1) await gate.promise
        return words
      },
      { maxBatchSize: 1, batchKey: (word) => word[0]! },
    )
    const first = f('x0') // runs alone and holds the slot
    await flushQueue()
    // Bucket a is older than bucket b, but after a1 leaves, b1 has waited longer than a2.
    const rest = [f('a1'), f('b1'), f('a2')]
    gate.resolve()
    await Promise.all([first, ...rest])
    expect(order).toEqual(['x0', 'a1', 'b1', 'a2'])
  })

  it('passes the call context to batchKey', async () => {
    const keys: (string | undefined)[] = []
    const f = batch(
      async (xs: number[], info) => {
        keys.push(info.key)
        return xs
      },
      { batchKey: (_x, context) => String(context.origin) },
    )
    await Promise.all([f(1, { context: { origin: 'http' } }), f(2, { context: { origin: 'handle' } })])
    expect(keys.sort()).toEqual(['handle', 'http'])
  })

  it('a batchKey that returns a non-string fails that call only', async () => {
    const f = batch(async (xs: number[]) => xs, { batchKey: (x) => (x === 1 ? (1 as unknown as string) : 'k') })
    const [bad, good] = await Promise.allSettled([f(1), f(2)])
    expect(bad).toMatchObject({ status: 'rejected', reason: { message: 'batchKey must return a string, returned 1' } })
    expect(good).toEqual({ status: 'fulfilled', value: 2 })
  })
})
