/**
 * Each example model's limit inside one workerd isolate, through the bench
 * app's /isolate-limit route (apps/isolate-limit.ts): per batch size, a
 * request that runs `n` batches in the Durable Object less one that runs
 * none, back to back, timed by the client, since workerd's clock stands
 * still while code runs. What HTTP and the hop cost drops out of the
 * difference; what is left is the model on the isolate's one thread.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT, median } from './lib.js'
import { BENCH_IMAGE } from './model-limit.js'

export interface IsolateLimitRow {
  model: 'ocr' | 'mlp'
  /** `run`: session.run on an input built once; `pipeline`: decode + preprocess of each item, then the run. */
  mode: 'run' | 'pipeline'
  batch: number
  itemsPerS: number
  /** items/s of each round, whose median is itemsPerS. */
  rounds: number[]
}

/** Work per timed request, against a request's own cost of a millisecond or two: `n` is set from a first timing. */
const TARGET_MS = 250

/** The limits of `cases` on the Worker at `base`, each the median of `rounds` differences. */
export async function measureIsolateLimits(
  base: string,
  cases: { model: 'ocr' | 'mlp'; mode: 'run' | 'pipeline'; batches: number[] }[],
  rounds: number,
): Promise<IsolateLimitRow[]> {
  const image = new Uint8Array(readFileSync(join(ROOT, BENCH_IMAGE)))
  const timed = async (query: string): Promise<number> => {
    const t0 = performance.now()
    const response = await fetch(`${base}/isolate-limit?${query}`, { method: 'POST', body: image, headers: { 'content-type': 'image/png' } })
    if (!response.ok) throw new Error(`/isolate-limit?${query}: ${response.status} ${await response.text()}`)
    await response.arrayBuffer()
    return performance.now() - t0
  }
  const rows: IsolateLimitRow[] = []
  for (const { model, mode, batches } of cases) {
    for (const batch of batches) {
      const query = `model=${model}&mode=${mode}&b=${batch}`
      // Model load and tier-up, then n from one timing of 4 batches.
      await timed(`${query}&n=4`)
      const msPerBatch = Math.max(0.005, ((await timed(`${query}&n=4`)) - (await timed(`${query}&n=0`))) / 4)
      const n = Math.min(100_000, Math.max(1, Math.round(TARGET_MS / msPerBatch)))
      const perRound: number[] = []
      for (let r = 0; r < rounds; r++) {
        const empty = await timed(`${query}&n=0`)
        perRound.push((n * batch) / ((await timed(`${query}&n=${n}`)) - empty) * 1000)
      }
      rows.push({ model, mode, batch, itemsPerS: median(perRound), rounds: perRound })
    }
  }
  return rows
}
