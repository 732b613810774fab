/**
 * The engine bench's workload (./engine.ts): the same calls through each
 * engine, a no-op handler behind batch(),
 * DataLoader, @yornaath/batshit and a minimal batcher of batch()'s shape.
 */
import DataLoader from 'dataloader'
import { create, indexedResolver, windowedFiniteBatchScheduler } from '@yornaath/batshit'
import { batch } from '../src/index.js'
import { minimalBatcher } from './minimal-batcher.js'

export type Engine = { name: string; make: () => (i: number) => Promise<unknown> }

export function enginesAt(maxBatchSize: number): Engine[] {
  return [
    {
      name: 'edgeserve batch()',
      make: () => batch(async (xs: number[]) => xs, { maxBatchSize }),
    },
    {
      name: 'DataLoader',
      make: () => {
        const loader = new DataLoader<number, number>(async (keys) => keys, { maxBatchSize, cache: false })
        return (i) => loader.load(i)
      },
    },
    {
      name: 'minimal batcher (reference)',
      make: () => minimalBatcher(async (xs: number[]) => xs, maxBatchSize),
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
          scheduler: windowedFiniteBatchScheduler({ windowMs: 0, maxBatchSize }),
        })
        return (i) => batcher.fetch(i)
      },
    },
  ]
}

/**
 * 256 callers, each awaiting its call before making the next: a server's
 * steady state. 256,000 calls a run, some 25 ms for the fastest engines: a
 * run of a few milliseconds measured GC and timer noise as much as the engine.
 */
export const CALLERS = 256
export const PER_CALLER = 1000

/** One closed-loop run; its nanoseconds. */
export async function closedLoop(call: (i: number) => Promise<unknown>): Promise<number> {
  // A named function, so a profile shows it apart from the engines' own.
  async function caller(c: number): Promise<void> {
    for (let i = 0; i < PER_CALLER; i++) if ((await call(c + i)) !== c + i) throw new Error('wrong result')
  }
  const t0 = process.hrtime.bigint()
  await Promise.all(Array.from({ length: CALLERS }, (_, c) => caller(c)))
  return Number(process.hrtime.bigint() - t0)
}
