import { describe, expect, it } from 'vitest'
import { batch, type BatchOptions } from '../../../src/index.js'
import { mulberry32 } from '../../support/prng.js'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe('every accepted call settles exactly once', () => {
  const configs: BatchOptions<number>[] = [
    { maxBatchSize: 4 },
    { maxBatchSize: 8, batchWaitTimeoutS: 0.002, maxConcurrentBatches: 2 },
    { maxBatchSize: 5, onBatchError: 'isolate', batchKey: (x) => String(x % 3) },
    { maxBatchSize: 6, batchSizeFn: (x) => 1 + (x % 3), maxQueuedRequests: 40 },
    { maxBatchSize: 4, strideS: 0.001, allowSmallBatch: true },
    // The adaptive batch size moving the limit (and probing) while calls leave.
    { maxBatchSize: 8, adaptive: true, batchSizeFn: (x) => 1 + (x % 3), maxConcurrentBatches: 2 },
    { maxBatchSize: 6, adaptive: { latencyTargetMs: 4 }, batchKey: (x) => String(x % 2), batchWaitTimeoutS: 0.002 },
    // Half the calls plain (no signal, no deadline), so batches mix calls
    // that can leave with calls that cannot.
    { maxBatchSize: 4, onBatchError: 'isolate' },
  ]
  const withPlainCalls = configs.length - 1
  configs.forEach((options, index) => {
    it(`under random aborts, deadlines, errors and throws (config ${index})`, async () => {
      const rand = mulberry32(1234 + index)
      const seenByHandler = new Set<number>()
      const f = batch(async (xs: number[]) => {
        for (const x of xs) seenByHandler.add(x)
        await sleep(rand() * 3)
        if (xs.some((x) => x % 17 === 0) && rand() < 0.5) throw new Error('random throw')
        if (rand() < 0.05) return xs.slice(1) // wrong length
        return xs.map((x) => (x % 11 === 0 ? new Error(`bad ${x}`) : x * 2))
      }, options)

      const settlements = new Map<number, number>()
      const abortedWhileQueued = new Set<number>()
      const calls: Promise<void>[] = []
      for (let i = 1; i <= 400; i++) {
        const controller = new AbortController()
        const deadline = rand() < 0.2 ? Date.now() + rand() * 20 : undefined
        const watched = index !== withPlainCalls || rand() < 0.5
        const p = f(i, watched ? { signal: controller.signal, deadline } : undefined).then(
          (value) => {
            expect(value).toBe(i * 2) // never another caller's answer
          },
          () => undefined,
        )
        calls.push(p.finally(() => settlements.set(i, (settlements.get(i) ?? 0) + 1)))
        if (watched && rand() < 0.15) {
          const delay = rand() * 5
          setTimeout(() => {
            if (!seenByHandler.has(i)) abortedWhileQueued.add(i)
            controller.abort()
          }, delay)
        }
        if (rand() < 0.3) await sleep(rand() * 2)
      }
      await Promise.all(calls)
      await sleep(30)
      expect(settlements.size).toBe(400)
      expect([...settlements.values()].every((n) => n === 1)).toBe(true)
      for (const i of abortedWhileQueued) expect(seenByHandler.has(i)).toBe(false)
      expect(f.stats().queueLength).toBe(0)
      expect(f.stats().batchesInFlight).toBe(0)
    })
  })
})
