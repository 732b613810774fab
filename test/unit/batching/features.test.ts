import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest'
import { getEventListeners } from 'node:events'
import { ItemTooLargeError, RequestTimeoutError, batch, runWithContext, type BatchOptions } from '../../../src/index.js'
import { deferred, flushQueue, passOwedLoopTurns, useFakeTime } from '../../support/deferred.js'

// No test inherits the loop turns an earlier test's batches are owed (see passOwedLoopTurns).
afterEach(async () => {
  vi.useRealTimers()
  await passOwedLoopTurns()
})

describe('setMaxBatchSize / setBatchWaitTimeoutS', () => {
  it('apply from the next batch, not to the running one', async () => {
    const sizes: number[] = []
    const gate = deferred()
    let first = true
    const f = batch(
      async (xs: number[]) => {
        sizes.push(xs.length)
        if (first) {
          first = false
          await gate.promise
        }
        return xs
      },
      { maxBatchSize: 2 },
    )
    const running = [f(0), f(1)]
    await flushQueue()
    f.setMaxBatchSize(5)
    const next = [2, 3, 4, 5, 6].map((x) => f(x))
    gate.resolve()
    await Promise.all([...running, ...next])
    expect(sizes).toEqual([2, 5])
  })

  it('a new wait timeout is used for the next batch', async () => {
    await useFakeTime()
    const batches: number[][] = []
    const f = batch(
      async (xs: number[]) => {
        batches.push(xs)
        return xs
      },
      { maxBatchSize: 10 },
    )
    await f(1) // opportunistic: runs at once
    f.setBatchWaitTimeoutS(0.2)
    const p = f(2)
    // Let the queue's pump run, so the batch starts forming (and its wait
    // timer is armed) at this fake time. If the first batch held the thread
    // past the loop-turn budget (a loaded machine can stretch it), the pump
    // waits some turns of the loop; advancing the clock before it ran let the
    // batch form at +200 ms with a timer no one advanced, and the test hung.
    await flushQueue()
    await vi.advanceTimersByTimeAsync(199)
    expect(batches).toEqual([[1]])
    await vi.advanceTimersByTimeAsync(1)
    await p
    expect(batches).toEqual([[1], [2]])
  })
})

describe('setMaxConcurrentBatches', () => {
  it('raised, starts the waiting batch at once beside the running one', async () => {
    const started: number[][] = []
    const gates = [deferred(), deferred()]
    const f = batch(
      async (xs: number[]) => {
        started.push(xs)
        await gates[started.length - 1]!.promise
        return xs
      },
      { maxBatchSize: 2 },
    )
    const first = [f(1), f(2)]
    await flushQueue()
    const second = [f(3), f(4)]
    await flushQueue()
    expect(started).toEqual([[1, 2]]) // one slot, taken
    f.setMaxConcurrentBatches(2)
    await flushQueue()
    expect(started).toEqual([
      [1, 2],
      [3, 4],
    ])
    expect(f.stats().batchesInFlight).toBe(2)
    gates[1]!.resolve()
    expect(await Promise.all(second)).toEqual([3, 4]) // the second ends first, the first still runs
    gates[0]!.resolve()
    await Promise.all(first)
  })

  it('lowered, lets the running batches end and starts no more until fewer than the new limit run', async () => {
    const started: number[][] = []
    const gates = Array.from({ length: 3 }, () => deferred())
    const f = batch(
      async (xs: number[]) => {
        started.push(xs)
        await gates[started.length - 1]!.promise
        return xs
      },
      { maxBatchSize: 1, maxConcurrentBatches: 2 },
    )
    const calls = [f(1), f(2), f(3)]
    await flushQueue()
    expect(started).toEqual([[1], [2]])
    f.setMaxConcurrentBatches(1)
    gates[0]!.resolve()
    await calls[0]
    await flushQueue()
    expect(started).toEqual([[1], [2]]) // one still runs: the third waits
    gates[1]!.resolve()
    await calls[1]
    await flushQueue()
    expect(started).toEqual([[1], [2], [3]])
    gates[2]!.resolve()
    await calls[2]
  })
})

describe('a batch already forming', () => {
  it('keeps the size and wait it started with; the next batch uses the new ones', async () => {
    await useFakeTime()
    const batches: number[][] = []
    const f = batch(
      async (xs: number[]) => {
        batches.push(xs)
        return xs
      },
      { maxBatchSize: 4, batchWaitTimeoutS: 0.1 },
    )
    const forming = [f(1), f(2)]
    await flushQueue() // a slot is free and the batch is not full: it forms, waiting 100 ms
    f.setMaxBatchSize(2) // would make it full
    f.setBatchWaitTimeoutS(10)
    await vi.advanceTimersByTimeAsync(99)
    expect(batches).toEqual([])
    await vi.advanceTimersByTimeAsync(1)
    expect(batches).toEqual([[1, 2]])
    await Promise.all(forming)

    const next = [f(3), f(4), f(5)]
    await flushQueue()
    expect(batches).toEqual([
      [1, 2],
      [3, 4],
    ]) // full at the new size at once
    await vi.advanceTimersByTimeAsync(9_999)
    expect(batches).toHaveLength(2) // the rest waits the new 10 s
    await vi.advanceTimersByTimeAsync(1)
    expect(batches).toEqual([[1, 2], [3, 4], [5]])
    await expect(Promise.all(next)).resolves.toEqual([3, 4, 5])
  })
})

describe('calls waiting while a batch runs', () => {
  /** A batched identity whose first batch holds the slot until released. */
  function heldFirst(options: BatchOptions<number>) {
    const batches: number[][] = []
    const gate = deferred()
    const f = batch(async (xs: number[]) => {
      batches.push([...xs])
      if (batches.length === 1) await gate.promise
      return xs
    }, options)
    return { f, batches, release: () => gate.resolve() }
  }

  it('a call that leaves makes room: the next batch fills it with later calls, in order', async () => {
    const { f, batches, release } = heldFirst({ maxBatchSize: 3 })
    const first = f(0)
    await flushQueue()
    const controller = new AbortController()
    const waiting = [f(1), f(2, { signal: controller.signal }), f(3), f(4), f(5)]
    controller.abort()
    const outcomes = Promise.allSettled(waiting)
    release()
    await first
    expect((await outcomes).map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled'])
    expect(batches).toEqual([[0], [1, 3, 4], [5]])
  })

  it('a maxBatchSize raised while calls wait makes the next batch that much larger', async () => {
    const { f, batches, release } = heldFirst({ maxBatchSize: 2 })
    const first = f(0)
    await flushQueue()
    const waiting = [1, 2, 3, 4, 5, 6].map((x) => f(x))
    f.setMaxBatchSize(4)
    release()
    await Promise.all([first, ...waiting])
    expect(batches).toEqual([[0], [1, 2, 3, 4], [5, 6]])
  })

  it('a maxBatchSize lowered while calls wait splits what waits into batches of the new size', async () => {
    const { f, batches, release } = heldFirst({ maxBatchSize: 4 })
    const first = f(0)
    await flushQueue()
    const waiting = [1, 2, 3, 4, 5].map((x) => f(x))
    f.setMaxBatchSize(2)
    release()
    await Promise.all([first, ...waiting])
    expect(batches).toEqual([[0], [1, 2], [3, 4], [5]])
  })

  it('an item admitted under a larger maxBatchSize that no longer fits fails with ItemTooLargeError; the rest run', async () => {
    const { f, batches, release } = heldFirst({ maxBatchSize: 4, batchSizeFn: (x) => (x === 9 ? 3 : 1) })
    const first = f(0)
    await flushQueue()
    const waiting = Promise.allSettled([f(1), f(9), f(2)])
    f.setMaxBatchSize(2)
    release()
    await first
    const [one, nine, two] = await waiting
    expect(nine).toMatchObject({ status: 'rejected', reason: expect.any(ItemTooLargeError) })
    expect(((nine as PromiseRejectedResult).reason as Error).message).toMatch(/size 3 but a batch holds at most 2/)
    expect([one, two]).toEqual([
      { status: 'fulfilled', value: 1 },
      { status: 'fulfilled', value: 2 },
    ])
    expect(batches.flat()).not.toContain(9)
  })
})

describe('stats()', () => {
  it('reports queue length, batches run, items run, mean batch size, batches in flight and the batch size limit', async () => {
    const gate = deferred()
    const f = batch(
      async (xs: number[]) => {
        await gate.promise
        return xs
      },
      { maxBatchSize: 3 },
    )
    expect(f.stats()).toEqual({ queueLength: 0, batchesRun: 0, itemsRun: 0, meanBatchSize: 0, batchesInFlight: 0, batchSizeLimit: 3 })
    const ps = [1, 2, 3, 4].map((x) => f(x))
    await flushQueue()
    expect(f.stats()).toEqual({ queueLength: 1, batchesRun: 1, itemsRun: 3, meanBatchSize: 3, batchesInFlight: 1, batchSizeLimit: 3 })
    gate.resolve()
    await Promise.all(ps)
    expect(f.stats()).toEqual({ queueLength: 0, batchesRun: 2, itemsRun: 4, meanBatchSize: 2, batchesInFlight: 0, batchSizeLimit: 3 })
  })
})

describe('maxConcurrentBatches', () => {
  it('runs up to that many batches at once', async () => {
    let running = 0
    let peak = 0
    const f = batch(
      async (xs: number[]) => {
        peak = Math.max(peak, ++running)
        await new Promise((r) => setTimeout(r, 5))
        running--
        return xs
      },
      { maxBatchSize: 2, maxConcurrentBatches: 3 },
    )
    const first = f(0) // takes a slot at once
    await flushQueue()
    await Promise.all([first, ...Array.from({ length: 11 }, (_, i) => f(i + 1))])
    expect(peak).toBe(3)
  })
})

describe("onBatchError: 'isolate'", () => {
  it('splits a throwing batch until only the poisonous items fail', async () => {
    const calls: number[][] = []
    const f = batch(
      async (xs: number[]) => {
        calls.push(xs)
        if (xs.includes(13)) throw new Error('13 is poison')
        return xs.map((x) => x * 2)
      },
      { maxBatchSize: 8, onBatchError: 'isolate' },
    )
    const inputs = [1, 2, 13, 4, 5, 6, 7, 8]
    const results = await Promise.allSettled(inputs.map((x) => f(x)))
    results.forEach((r, i) => {
      if (inputs[i] === 13) expect(r).toMatchObject({ status: 'rejected', reason: { message: '13 is poison' } })
      else expect(r).toEqual({ status: 'fulfilled', value: inputs[i]! * 2 })
    })
    // 8 -> 4+4 -> 2+2 -> 1+1: a binary search, not a re-run per item.
    expect(calls.length).toBeLessThanOrEqual(1 + 2 + 2 + 2)
    expect(f.stats().batchesInFlight).toBe(0)
  })

  it("with 'fail-all' (the default) every caller of the batch fails", async () => {
    const f = batch(async (xs: number[]) => {
      if (xs.includes(13)) throw new Error('13 is poison')
      return xs
    })
    const results = await Promise.allSettled([f(1), f(13), f(3)])
    expect(results.every((r) => r.status === 'rejected')).toBe(true)
  })
})

describe('batchSizeFn', () => {
  it('packs items whose sizes sum to at most maxBatchSize, in order of arrival', async () => {
    const batches: string[][] = []
    const f = batch(
      async (texts: string[]) => {
        batches.push(texts)
        return texts.map((t) => t.length)
      },
      { maxBatchSize: 10, batchSizeFn: (text) => text.length },
    )
    const texts = ['aaaa', 'bbbbb', 'cc', 'd', 'eeeeeeee', 'ff']
    await expect(Promise.all(texts.map((t) => f(t)))).resolves.toEqual([4, 5, 2, 1, 8, 2])
    for (const group of batches) expect(group.join('').length).toBeLessThanOrEqual(10)
    expect(batches.flat()).toEqual(texts) // no item was pushed back behind a later one
  })

  it('fails an item larger than a whole batch with a clear message, alone', async () => {
    const f = batch(async (texts: string[]) => texts, { maxBatchSize: 4, batchSizeFn: (t) => t.length })
    const [big, small] = await Promise.allSettled([f('12345'), f('ok')])
    expect(big).toMatchObject({ status: 'rejected' })
    const reason = (big as PromiseRejectedResult).reason as Error
    expect(reason).toBeInstanceOf(ItemTooLargeError)
    expect(reason.message).toMatch(/size 5 but a batch holds at most 4 \(maxBatchSize\)/)
    expect(small).toEqual({ status: 'fulfilled', value: 'ok' })
  })

  it('rejects a size that is not a positive finite number', async () => {
    const f = batch(async (xs: number[]) => xs, { batchSizeFn: (x) => x })
    await expect(f(0)).rejects.toThrow(/batchSizeFn must return a finite number greater than 0, returned 0/)
    await expect(f(Number.NaN)).rejects.toThrow(TypeError)
  })
})

describe('strideS', () => {
  it('forms batches on a fixed stride instead of on each arrival', async () => {
    await useFakeTime()
    const batches: number[][] = []
    const f = batch(
      async (xs: number[]) => {
        batches.push(xs)
        return xs
      },
      { maxBatchSize: 10, strideS: 0.05 },
    )
    const ps = [f(1)]
    await vi.advanceTimersByTimeAsync(20)
    ps.push(f(2))
    await vi.advanceTimersByTimeAsync(29)
    expect(batches).toEqual([])
    await vi.advanceTimersByTimeAsync(1)
    expect(batches).toEqual([[1, 2]])
    ps.push(f(3))
    await vi.advanceTimersByTimeAsync(50)
    expect(batches).toEqual([[1, 2], [3]])
    await expect(Promise.all(ps)).resolves.toEqual([1, 2, 3])
    expect(vi.getTimerCount()).toBe(0) // the ticker stops when the queue is empty
  })
})

describe('allowSmallBatch: false', () => {
  it('dispatches full batches only', async () => {
    await useFakeTime()
    const batches: number[][] = []
    const f = batch(
      async (xs: number[]) => {
        batches.push(xs)
        return xs
      },
      { maxBatchSize: 3, batchWaitTimeoutS: 0.01, allowSmallBatch: false },
    )
    const ps = [f(1), f(2)]
    await vi.advanceTimersByTimeAsync(10_000)
    expect(batches).toEqual([])
    ps.push(f(3))
    await vi.advanceTimersByTimeAsync(0)
    expect(batches).toEqual([[1, 2, 3]])
    await expect(Promise.all(ps)).resolves.toEqual([1, 2, 3])
  })

  it("callers' deadlines still bound the wait", async () => {
    await useFakeTime()
    const f = batch(async (xs: number[]) => xs, { maxBatchSize: 3, allowSmallBatch: false })
    const p = f(1, { deadline: Date.now() + 250 })
    const outcome = p.catch((e: unknown) => e)
    await vi.advanceTimersByTimeAsync(250)
    expect(await outcome).toBeInstanceOf(RequestTimeoutError)
    expect(f.stats().queueLength).toBe(0)
  })
})

describe('ambient request context', () => {
  it("a call without options uses the ambient request's signal", async () => {
    const controller = new AbortController()
    await runWithContext(
      { signal: controller.signal, origin: 'http' },
      async () => {
        const gate = deferred()
        const seen: number[] = []
        const f = batch(async (xs: number[]) => {
          seen.push(...xs)
          await gate.promise
          return xs
        })
        const running = f(1, { signal: new AbortController().signal }) // explicit options win
        await flushQueue()
        const queued = f(2)
        controller.abort()
        await expect(queued).rejects.toThrow(/cancelled/)
        gate.resolve()
        await expect(running).resolves.toBe(1)
        expect(seen).toEqual([1])
      },
      undefined,
    )
  })
})

describe('a settled call stops watching its signal and deadline', () => {
  /**
   * The timers set from now on that have neither fired nor been cleared: a
   * deadline left watched keeps one. Only timers set through the global
   * setTimeout during the test are counted, not every timer in the process:
   * those of the test runner come and go on their own, and a count of them
   * all changed under a loaded machine while this test ran.
   */
  function pendingTimers(): () => number {
    const pending = new Set<ReturnType<typeof setTimeout>>()
    const { setTimeout: realSet, clearTimeout: realClear } = globalThis
    const set = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
      const timer = realSet(() => {
        pending.delete(timer)
        callback(...args)
      }, ms)
      pending.add(timer)
      return timer
    }) as typeof setTimeout)
    const clear = vi.spyOn(globalThis, 'clearTimeout').mockImplementation((timer) => {
      pending.delete(timer as ReturnType<typeof setTimeout>)
      realClear(timer)
    })
    onTestFinished(() => {
      set.mockRestore()
      clear.mockRestore()
    })
    return () => pending.size
  }

  it('whether its batch also holds calls that nothing watches', async () => {
    const f = batch(async (xs: number[]) => xs.map((x) => (x === 3 ? new Error('bad 3') : x * 10)), { maxBatchSize: 8 })
    const timers = pendingTimers()
    const controller = new AbortController()
    const results = Promise.allSettled([
      f(1),
      f(2, { signal: controller.signal, deadline: Date.now() + 60_000 }),
      f(3),
      f(4, { deadline: Date.now() + 60_000 }),
      f(5),
    ])
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1)
    expect(timers()).toBe(1)
    expect((await results).map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual([10, 20, 'bad 3', 40, 50])
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)
    expect(timers()).toBe(0)
    expect(f.stats()).toMatchObject({ queueLength: 0, batchesInFlight: 0 })
  })

  it('and a later batch of calls that nothing watches runs, freeing its slot as it answers', async () => {
    const f = batch(async (xs: number[]) => xs, { maxBatchSize: 4 })
    const controller = new AbortController()
    await expect(f(1, { signal: controller.signal })).resolves.toBe(1)
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0)
    // The batch's slot is free by the time its callers have their answers,
    // not when the runner unwinds after them.
    const answered = [f(2), f(3), f(4)].map((call) => call.then((value) => [value, f.stats().batchesInFlight]))
    await expect(Promise.all(answered)).resolves.toEqual([
      [2, 0],
      [3, 0],
      [4, 0],
    ])
    controller.abort()
    expect(f.stats()).toMatchObject({ queueLength: 0, batchesInFlight: 0, batchesRun: 2 })
    await expect(f(5)).resolves.toBe(5)
  })
})
