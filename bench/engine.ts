/**
 * Engine overhead: items/s through batch() with a no-op handler at
 * maxBatchSize 64, against DataLoader, @yornaath/batshit and a minimal
 * batcher of batch()'s shape (./minimal-batcher.ts, a reference), in one
 * process, on the same items. Prints one JSON line.
 */
import DataLoader from 'dataloader'
import { create, indexedResolver, windowedFiniteBatchScheduler } from '@yornaath/batshit'
import { batch } from '../src/index.js'
import { median, quick } from './lib.js'
import { minimalBatcher } from './minimal-batcher.js'

const N = 64 * 1000 // items per burst: 1,000 batches of 64, all called at once
const WARMUP = quick ? 3 : 5
const REPEATS = quick ? 7 : 15

type Engine = { name: string; make: () => (i: number) => Promise<unknown> }

const engines: Engine[] = [
  {
    name: 'edgeserve batch()',
    make: () => batch(async (xs: number[]) => xs, { maxBatchSize: 64 }),
  },
  {
    name: 'DataLoader',
    make: () => {
      const loader = new DataLoader<number, number>(async (keys) => keys, { maxBatchSize: 64, cache: false })
      return (i) => loader.load(i)
    },
  },
  {
    name: 'minimal batcher (reference)',
    make: () => minimalBatcher(async (xs: number[]) => xs, 64),
  },
  {
    name: '@yornaath/batshit',
    make: () => {
      const batcher = create({
        fetcher: async (queries: number[]) => {
          const out: Record<number, number> = {}
          for (const q of queries) out[q] = q
          return out
        },
        resolver: indexedResolver(),
        scheduler: windowedFiniteBatchScheduler({ windowMs: 0, maxBatchSize: 64 }),
      })
      return (i) => batcher.fetch(i)
    },
  },
]

const items = Array.from({ length: N }, (_, i) => i)

async function burst(call: (i: number) => Promise<unknown>): Promise<number> {
  const t0 = process.hrtime.bigint()
  const results = await Promise.all(items.map(call))
  const ns = Number(process.hrtime.bigint() - t0)
  if (results.length !== N || results[N - 1] !== N - 1) throw new Error('wrong results')
  return ns
}

/**
 * 256 callers, each awaiting its call before making the next: a server's
 * steady state. 256,000 calls a run, some 25 ms for the fastest engines: a
 * run of a few milliseconds measured GC and timer noise as much as the engine.
 */
const CALLERS = 256
const PER_CALLER = 1000
async function closedLoop(call: (i: number) => Promise<unknown>): Promise<number> {
  const t0 = process.hrtime.bigint()
  await Promise.all(
    Array.from({ length: CALLERS }, async (_, c) => {
      for (let i = 0; i < PER_CALLER; i++) if ((await call(c + i)) !== c + i) throw new Error('wrong result')
    }),
  )
  return Number(process.hrtime.bigint() - t0)
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
  for (const engine of engines) {
    const ns = median(samples.get(engine.name)!)
    rows.push({ workload, engine: engine.name, itemsPerS: (count / ns) * 1e9, nsPerItem: ns / count, items: count, repeats: REPEATS })
  }
}
console.log(JSON.stringify(rows))
