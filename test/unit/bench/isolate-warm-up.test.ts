import { describe, expect, it } from 'vitest'
import { measureIsolateLimits } from '../../../bench/isolate-limit.js'
import { isolateStandIn } from '../../support/isolate-stand-in.js'

/**
 * An isolate that runs at a quarter of its speed until it has done `coldMs`
 * of batch work (40 ms a batch, then 10), as a fresh workerd isolate runs the
 * OCR pipeline for its first seconds of work.
 */
function freshIsolate(coldMs: number): Promise<{ base: string }> {
  let worked = 0
  return isolateStandIn((n) => {
    const ms = n * (worked < coldMs ? 40 : 10)
    worked += ms
    return ms
  })
}

const cases = [{ model: 'ocr' as const, mode: 'pipeline' as const, batches: [8] }]

describe("a fresh isolate's first cell", () => {
  it('is timed only after the warm-up, every round at the warm rate', async () => {
    const standIn = await freshIsolate(1_000)
    const [row] = await measureIsolateLimits(standIn.base, cases, 3, 1_500)
    // Warm: 8 items every 10 ms, 800 items/s less what HTTP adds; cold reads a quarter of that.
    for (const round of row!.rounds) expect(round).toBeGreaterThan(500)
  })

  it('reads its first round cold with no more than one window of warm-up', async () => {
    const standIn = await freshIsolate(1_000)
    const [row] = await measureIsolateLimits(standIn.base, cases, 3, 0)
    expect(row!.rounds[0]).toBeLessThan(300)
  })
})
