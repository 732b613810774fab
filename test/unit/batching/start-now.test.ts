/**
 * startNextBatchNow(): the calls a queue holds wait for no more. A Durable
 * Object asks it for the items a Worker isolate carried in one call, whose
 * answer goes back once all of them are answered: those left over after
 * full batches must not wait out `batchWaitTimeoutS` for other calls.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { batch } from '../../../src/index.js'
import { startNextBatchNow } from '../../../src/batching/controls.js'
import { deferred, flushQueue, passOwedLoopTurns, useFakeTime } from '../../support/deferred.js'

afterEach(async () => {
  vi.useRealTimers()
  await passOwedLoopTurns()
})

/** A batched identity with a long wait, whose batches are recorded and held until released. */
function heldBatches(options: { maxBatchSize: number; batchWaitTimeoutS: number; allowSmallBatch?: boolean }) {
  const batches: number[][] = []
  let gate = deferred()
  const f = batch(async (xs: number[]) => {
    batches.push([...xs])
    await gate.promise
    return xs
  }, options)
  return {
    f,
    batches,
    release: () => {
      gate.resolve()
      gate = deferred()
    },
  }
}

describe('startNextBatchNow', () => {
  it('starts a partial batch that is waiting, at once rather than after its wait', async () => {
    await useFakeTime()
    const { f, batches, release } = heldBatches({ maxBatchSize: 4, batchWaitTimeoutS: 10 })
    const calls = [f(1), f(2)]
    await vi.advanceTimersByTimeAsync(100)
    expect(batches).toEqual([])
    startNextBatchNow(f)
    await flushQueue()
    expect(batches).toEqual([[1, 2]])
    release()
    await expect(Promise.all(calls)).resolves.toEqual([1, 2])
  })

  it('holds while a batch runs: the calls left over after the full batches start once the slot frees, without their wait', async () => {
    await useFakeTime()
    const { f, batches, release } = heldBatches({ maxBatchSize: 4, batchWaitTimeoutS: 10 })
    // Ten calls at once, as a carried call brings them: 4 and 4 full, 2 left over.
    const calls = Array.from({ length: 10 }, (_, i) => f(i))
    await flushQueue()
    expect(batches).toEqual([[0, 1, 2, 3]])
    startNextBatchNow(f)
    release()
    await flushQueue()
    expect(batches).toEqual([
      [0, 1, 2, 3],
      [4, 5, 6, 7],
    ])
    release()
    await flushQueue()
    expect(batches).toEqual([
      [0, 1, 2, 3],
      [4, 5, 6, 7],
      [8, 9],
    ])
    release()
    await expect(Promise.all(calls)).resolves.toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
  })

  it('lasts until the queue is empty: a call after that waits its wait again', async () => {
    await useFakeTime()
    const { f, batches, release } = heldBatches({ maxBatchSize: 4, batchWaitTimeoutS: 10 })
    const first = f(1)
    startNextBatchNow(f)
    await flushQueue()
    release()
    await first
    const later = f(2)
    await vi.advanceTimersByTimeAsync(9_999)
    expect(batches).toEqual([[1]])
    await vi.advanceTimersByTimeAsync(1)
    expect(batches).toEqual([[1], [2]])
    release()
    await later
  })

  it('does nothing to an empty queue: the next call still waits its wait', async () => {
    await useFakeTime()
    const { f, batches, release } = heldBatches({ maxBatchSize: 4, batchWaitTimeoutS: 10 })
    startNextBatchNow(f)
    const later = f(1)
    await vi.advanceTimersByTimeAsync(9_999)
    expect(batches).toEqual([])
    await vi.advanceTimersByTimeAsync(1)
    expect(batches).toEqual([[1]])
    release()
    await later
  })

  it('leaves a queue without allowSmallBatch waiting for a full batch', async () => {
    await useFakeTime()
    const { f, batches, release } = heldBatches({ maxBatchSize: 4, batchWaitTimeoutS: 0.01, allowSmallBatch: false })
    const calls = [f(1), f(2)]
    startNextBatchNow(f)
    await vi.advanceTimersByTimeAsync(1_000)
    expect(batches).toEqual([])
    calls.push(f(3), f(4))
    await flushQueue()
    expect(batches).toEqual([[1, 2, 3, 4]])
    release()
    await Promise.all(calls)
  })
})
