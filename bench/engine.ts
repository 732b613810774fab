/**
 * Engine overhead: items/s through batch() with a no-op handler at
 * maxBatchSize 64, against DataLoader, @yornaath/batshit and a minimal
 * batcher of batch()'s shape (./minimal-batcher.ts, a reference), in one
 * process, on the same items. Prints one JSON line.
 */
import { CALLERS, PER_CALLER, closedLoop, enginesAt } from './engine-workload.js'
import { median, quick } from './lib.js'

const N = 64 * 1000 // items per burst: 1,000 batches of 64, all called at once
const WARMUP = quick ? 3 : 5
const REPEATS = quick ? 9 : 15

const engines = enginesAt(64)

const items = Array.from({ length: N }, (_, i) => i)

async function burst(call: (i: number) => Promise<unknown>): Promise<number> {
  const t0 = process.hrtime.bigint()
  const results = await Promise.all(items.map(call))
  const ns = Number(process.hrtime.bigint() - t0)
  if (results.length !== N || results[N - 1] !== N - 1) throw new Error('wrong results')
  return ns
}

/** Let the previous run's timers fire and its promise jobs drain outside the timed region. */
function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 20))
}

const workloads = [
  { workload: 'closed-loop', items: CALLERS * PER_CALLER, run: closedLoop },
  { workload: 'burst', items: N, run: burst },
]
const rows = []
for (const { workload, items: count, run } of workloads) {
  const samples = new Map<string, number[]>(engines.map((e) => [e.name, []]))
  // Interleave engines so drift (GC, tier-up) hits them alike, and rotate
  // their order each round: an engine run right after another pays for the
  // garbage and the timers that one left behind (batshit leaves a timer and
  // an AbortSignal per batch), so a fixed order charges it to the same one.
  for (let round = 0; round < WARMUP + REPEATS; round++) {
    for (let turn = 0; turn < engines.length; turn++) {
      const engine = engines[(round + turn) % engines.length]!
      await settle()
      const ns = await run(engine.make())
      if (round >= WARMUP) samples.get(engine.name)!.push(ns)
    }
  }
  // Against DataLoader round by round: the two ran seconds apart, so a slow stretch of this shared
  // machine slows both, and the median of the rounds' ratios moves less than the ratio of medians.
  const dataLoader = samples.get('DataLoader')!
  for (const engine of engines) {
    const own = samples.get(engine.name)!
    const ns = median(own)
    const vsDataLoader = median(own.map((t, round) => dataLoader[round]! / t))
    rows.push({ workload, engine: engine.name, itemsPerS: (count / ns) * 1e9, nsPerItem: ns / count, vsDataLoader, items: count, repeats: REPEATS })
  }
}
console.log(JSON.stringify(rows))
