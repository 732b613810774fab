/**
 * Engine overhead: items/s through batch() with a no-op handler at
 * maxBatchSize 64, against DataLoader, @yornaath/batshit and a minimal
 * batcher of batch()'s shape (./minimal-batcher.ts, a reference), in one
 * process, on the same items. Prints one JSON line.
 */
import { CALLERS, PER_CALLER, closedLoop, enginesAt } from './engine-workload.js'
import { balancedOrders } from './balanced-order.js'
import { median, quick, roundByRound } from './lib.js'

const N = 64 * 1000 // items per burst: 1,000 batches of 64, all called at once
const engines = enginesAt(64)
/** Each round runs the engines in one of these orders: each engine runs right after each other one equally often. */
const ORDERS = balancedOrders(engines.length)

const WARMUP = quick ? 3 : 5
// Whole cycles of the orders, so that no engine follows another more often in the timed rounds. As
// many in a quick run as in a full one: a run of 256,000 calls takes some 50 ms, so a collection that
// lands in it moves that round's ratio to DataLoader by a quarter either way (0.59 to 1.20 in one run
// of eight rounds), and 24 rounds cost seconds.
const REPEATS = ORDERS.length * 6

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
  // Interleave engines so drift (GC, tier-up) hits them alike, in balanced
  // orders: an engine run right after another runs in what that one left
  // behind (its garbage, a collection under way, batshit's timers and
  // AbortSignals), which moved this ratio by a tenth or more either way.
  // The timed rounds start a cycle of the orders afresh.
  for (let round = 0; round < WARMUP + REPEATS; round++) {
    const order = ORDERS[Math.max(0, round - WARMUP) % ORDERS.length]!
    for (const index of order) {
      const engine = engines[index]!
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
    const vsDataLoader = roundByRound(dataLoader, own)
    rows.push({ workload, engine: engine.name, itemsPerS: (count / ns) * 1e9, nsPerItem: ns / count, vsDataLoader, items: count, repeats: REPEATS })
  }
}
console.log(JSON.stringify(rows))
