import { describe, expect, it } from 'vitest'
import { IsolateTimer, SETTLE_TRIES } from '../../../bench/isolate-limit.js'
import { isolateStandIn } from '../../support/isolate-stand-in.js'

/**
 * An isolate whose batches take 10 ms each, and whose first `slowEmpties`
 * requests for none answer after `slowMs`, as requests do that wait behind
 * the batches a served row leaves in the isolate.
 */
async function busyIsolate(slowEmpties: number, slowMs = 150): Promise<{ base: string; empties: () => number }> {
  let empties = 0
  const standIn = await isolateStandIn((n) => {
    if (n > 0) return n * 10
    empties++
    return empties <= slowEmpties ? slowMs : 0
  })
  return { ...standIn, empties: () => empties }
}

const cell = { model: 'ocr', mode: 'pipeline', batch: 8 } as const

describe('a window in the isolate', () => {
  it('waits out the work a load left before it times its empty request', async () => {
    const standIn = await busyIsolate(3)
    // 80 items in 100 ms and what HTTP adds: about 800 items/s. Timed against an empty request
    // that waited 150 ms, the same window reads negative.
    const itemsPerS = await new IsolateTimer(standIn.base).window(cell, 10)
    expect(itemsPerS).toBeGreaterThan(0)
    expect(itemsPerS).toBeLessThan(2000)
    // Three slow, then fast ones until one answers within SETTLED_MS (one on a quiet machine,
    // more where other tests share the cores), then the one timed.
    expect(standIn.empties()).toBeGreaterThanOrEqual(5)
  })

  it('stops waiting after SETTLE_TRIES empty requests when the isolate never settles', async () => {
    const standIn = await busyIsolate(Infinity, 10)
    await new IsolateTimer(standIn.base).window(cell, 1)
    expect(standIn.empties()).toBe(SETTLE_TRIES + 1)
  })
})
