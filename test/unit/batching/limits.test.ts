/**
 * The batch-size limits a queue asks "how large may this key's next batch
 * be?": FixedBatchSize without `adaptive`, AdaptiveLimits with it. Here
 * they are driven alone, with batches made by hand on a fake clock; the
 * queue's use of them is in adaptive.test.ts and rules.test.ts.
 */
import { describe, expect, it } from 'vitest'
import { AdaptiveLimits, type LearningQueue } from '../../../src/batching/adaptive-limits.js'
import { FixedBatchSize, type BatchSizeLimit, type BatchSizeLimits, type BucketKey, type MeasuredBatch } from '../../../src/batching/limits.js'

const settings = (maxBatchSize: number) => ({ maxBatchSize, maxConcurrentBatches: 1, batchWaitTimeoutS: 0 })
const unkeyed: BucketKey = { id: undefined, key: undefined, modelId: undefined }
const keyed = (key: string): BucketKey => ({ id: key, key, modelId: undefined })

describe('FixedBatchSize', () => {
  it('answers maxBatchSize for every key, follows setMaxBatchSize, learns nothing, and holds while a batch forms', () => {
    const options = settings(8)
    const limits: BatchSizeLimits = new FixedBatchSize(options)
    const keys = [unkeyed, keyed('narrow'), { id: '\u0000m\u0000', key: undefined, modelId: 'm' }].map((key) => limits.limitOf(key))
    expect(keys.map((limit) => limit.batchSizeLimit)).toEqual([8, 8, 8])
    expect(limits.batchSizeLimit).toBe(8)
    options.maxBatchSize = 3
    limits.maxBatchSizeChanged()
    expect(keys.map((limit) => limit.batchSizeLimit)).toEqual([3, 3, 3])
    expect(limits.batchSizeLimit).toBe(3)
    // Nothing learns, so the queue times no batch for it.
    // eslint-disable-next-line @typescript-eslint/unbound-method -- read only to check that a fixed size defines none of them
    expect([limits.admitted, limits.batchStarted, limits.batchEnded, limits.stepStarted, limits.costCurve]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ])
    expect(limits.heldWhileForming).toBe(true)
  })
})

/** AdaptiveLimits on a fake clock, with `waiting` calls queued for every key, and the changes it reports. */
function adaptive(maxBatchSize = 64) {
  const clock = { now: 1000 }
  const changes: [number, number, string | undefined][] = []
  const queue: LearningQueue = {
    waitingCalls: () => 100,
    observer: { limitChanged: (from, to, key) => changes.push([from, to, key]) },
  }
  const options = settings(maxBatchSize)
  const limits = new AdaptiveLimits(options, undefined, queue, () => clock.now, false)
  /** Run `batches` batches of `key`, each as large as its limit allows, taking `cost(n)` ms. */
  const run = (key: BucketKey, cost: (n: number) => number, batches: number, limit = limits.limitOf(key)) => {
    for (let i = 0; i < batches; i++) limits.batchEnded(measured(key, limit, cost))
    return limit.batchSizeLimit
  }
  const measured = (key: BucketKey, limit: BatchSizeLimit, cost: (n: number) => number, n = limit.batchSizeLimit): MeasuredBatch => {
    const batch = { bucket: { ...key, limit }, units: n, entries: Array.from({ length: n }), startedAt: 0, abandoned: false, waitedOut: false }
    limits.batchStarted(batch)
    clock.now += cost(n)
    return batch
  }
  return { limits, options, clock, changes, run, measured }
}

/** A fixed cost per batch: the largest batch serves the most. */
const overhead = (n: number) => 50 + 0.1 * n
/** A knee at 4 items: 4 serves the most. */
const kneeAt4 = (n: number) => (n <= 4 ? 2 + 0.5 * n : 10 + 3 * (n - 4))

describe('AdaptiveLimits', () => {
  it("answers each key with the size its own batches' costs chose, and keeps the calls without a key apart", () => {
    const a = adaptive()
    expect(a.run(keyed('wide'), overhead, 400)).toBe(64)
    expect(a.run(keyed('narrow'), kneeAt4, 400)).toBe(4)
    // Neither moved the other, nor the calls without a key, which start at the bottom of the ladder.
    expect(a.limits.limitOf(keyed('wide')).batchSizeLimit).toBe(64)
    expect(a.limits.limitOf(unkeyed).batchSizeLimit).toBe(1)
    // stats() shows the key that ran last, and the observer heard each key's moves under its own name.
    expect(a.limits.batchSizeLimit).toBe(4)
    expect(a.changes.at(-1)).toEqual([expect.any(Number), 4, 'narrow'])
    expect(a.changes.some(([, to, key]) => key === 'wide' && to === 64)).toBe(true)
  })

  it('bounds every key by a lowered maxBatchSize at once, before any batch has run at it', () => {
    const a = adaptive()
    a.run(unkeyed, overhead, 400)
    a.run(keyed('wide'), overhead, 400)
    a.options.maxBatchSize = 20
    a.limits.maxBatchSizeChanged()
    expect(a.limits.limitOf(unkeyed).batchSizeLimit).toBe(20)
    expect(a.limits.limitOf(keyed('wide')).batchSizeLimit).toBe(20)
    expect(a.limits.batchSizeLimit).toBe(20)
  })

  it('never answers less than the largest call admitted, for the keys it holds and for keys it meets later', () => {
    const a = adaptive()
    const narrow = a.limits.limitOf(keyed('narrow'))
    a.limits.admitted(6)
    expect(narrow.batchSizeLimit).toBe(6)
    expect(a.limits.limitOf(unkeyed).batchSizeLimit).toBe(6)
    expect(a.limits.limitOf(keyed('new')).batchSizeLimit).toBe(6)
  })

  it('learns nothing from a batch whose callers all left while it ran, or, once it runs steps, from whole batches', () => {
    const a = adaptive()
    const key = keyed('k')
    const limit = a.limits.limitOf(key)
    a.run(key, overhead, 400, limit)
    expect(limit.batchSizeLimit).toBe(64)
    const curve = a.limits.costCurve()
    for (let i = 0; i < 50; i++) a.limits.batchEnded({ ...a.measured(key, limit, () => 1), abandoned: true })
    expect(a.limits.costCurve()).toEqual(curve)
    // Continuous batching: each step is learned from, and the batch that holds them is not.
    const stepEnded = a.limits.stepStarted(a.measured(key, limit, () => 0))
    a.clock.now += 500
    stepEnded(Array.from({ length: 64 }, () => ({ size: 1 })))
    expect(a.limits.perStep).toBe(true)
    const afterStep = a.limits.costCurve()
    a.limits.batchEnded(a.measured(key, limit, () => 5000))
    expect(a.limits.costCurve()).toEqual(afterStep)
  })

  it('keeps the 64 keys run last; a key pushed out keeps its limit for the calls that hold it, and learns on', () => {
    const a = adaptive()
    const first = keyed('first')
    const limit = a.limits.limitOf(first)
    a.run(first, overhead, 400, limit)
    for (let i = 0; i < 64; i++) a.run(keyed(`other ${i}`), kneeAt4, 1)
    a.run(keyed('other 63'), kneeAt4, 400)
    // A new estimate for 'first' starts where the key learned last settled, not from what 'first'
    // learned; the calls that hold the old one still see that.
    expect(a.limits.limitOf(first).batchSizeLimit).toBe(4)
    expect(limit.batchSizeLimit).toBe(64)
    a.run(first, kneeAt4, 400, limit)
    expect(limit.batchSizeLimit).toBe(4)
  })

  it('answers maxBatchSize from the start, and learns nothing, where the clock stands still while code runs (Workers)', () => {
    const queue: LearningQueue = { waitingCalls: () => 100, observer: undefined }
    const limits = new AdaptiveLimits(settings(32), undefined, queue, () => 0, true)
    expect(limits.limitOf(unkeyed).batchSizeLimit).toBe(32)
    expect(limits.limitOf(keyed('k')).batchSizeLimit).toBe(32)
    expect(limits.batchSizeLimit).toBe(32)
    expect(limits.measuring).toBe(false)
  })
})
