/**
 * Each example model's limit inside one workerd isolate, through the bench
 * app's /isolate-limit route (apps/isolate-limit.ts): per batch size, a
 * request that runs `n` batches in the Durable Object less one that runs
 * none, back to back, timed by the client: deployed, a Worker's clock
 * stands still while code runs, and local workerd's moves only in whole
 * milliseconds. What HTTP and the hop cost drops out of the
 * difference; what is left is the model on the isolate's one thread.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT, median } from './lib.js'
import { BENCH_IMAGE, limitBeside } from './model-limit.js'

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
/** How many batches make one timed request of about TARGET_MS, at `msPerBatch`. */
const batchesPerWindow = (msPerBatch: number): number => Math.min(100_000, Math.max(1, Math.round(TARGET_MS / msPerBatch)))

/** An empty request answers within this on an idle isolate here (2-5 ms); slower, it waited behind other work. */
const SETTLED_MS = 5
/** Empty requests at most before a window, however long each takes: the wait for an idle isolate is bounded. */
export const SETTLE_TRIES = 50

/** One case's cell: a model, its mode and a batch size, as its row names them. */
type IsolateCell = Pick<IsolateLimitRow, 'model' | 'mode' | 'batch'>

/** Times requests to the Worker at `base` that run batches of `cell` inside its isolate. */
export class IsolateTimer {
  readonly #image = new Uint8Array(readFileSync(join(ROOT, BENCH_IMAGE)))
  constructor(private readonly base: string) {}

  /** ms of one request running `n` batches of `cell`, timed by the client. */
  async timed(cell: IsolateCell, n: number): Promise<number> {
    const query = `model=${cell.model}&mode=${cell.mode}&b=${cell.batch}&n=${n}`
    const t0 = performance.now()
    const response = await fetch(`${this.base}/isolate-limit?${query}`, { method: 'POST', body: this.#image, headers: { 'content-type': 'image/png' } })
    if (!response.ok) throw new Error(`/isolate-limit?${query}: ${response.status} ${await response.text()}`)
    await response.arrayBuffer()
    return performance.now() - t0
  }

  /** Empty requests until one answers within SETTLED_MS (at most SETTLE_TRIES of them). */
  async settle(cell: IsolateCell): Promise<void> {
    for (let tries = 0; tries < SETTLE_TRIES; tries++) if ((await this.timed(cell, 0)) <= SETTLED_MS) return
  }

  /**
   * items/s of one window: `n` batches less a request that runs none, once
   * the isolate is idle. Served rows end with work still in the isolate (the
   * batches of requests whose clients have left): after the OCR row, an
   * empty request timed behind that work read 130-190 ms instead of 2-5, and
   * windows beside the row read up to a fifth fast (321 items/s against 266
   * quiet). So empty requests go first until one answers within SETTLED_MS,
   * and the empty request timed comes after the batches.
   */
  async window(cell: IsolateCell, n: number): Promise<number> {
    await this.settle(cell)
    const full = await this.timed(cell, n)
    return ((n * cell.batch) / (full - (await this.timed(cell, 0)))) * 1000
  }
}

/**
 * Untimed work before a fresh isolate's first cell. In one, OCR's pipeline at
 * batch 1 read 60 items/s in its first window, then 130-140 in each of the
 * next twelve (about 7 s of work in all), then 230-240: the warm rate comes
 * only after seconds of work, so one window's warm-up left the first cell's
 * first round reading a quarter of the rest.
 */
const FRESH_ISOLATE_WARM_UP_MS = 15_000

/** The limits of `cases` on the Worker at `base`, each the median of `rounds` differences. */
export async function measureIsolateLimits(
  base: string,
  cases: (Omit<IsolateCell, 'batch'> & { batches: number[] })[],
  rounds: number,
  /** Untimed work before the first cell; the bench's own isolate needs FRESH_ISOLATE_WARM_UP_MS. */
  warmUpMs = FRESH_ISOLATE_WARM_UP_MS,
): Promise<IsolateLimitRow[]> {
  const timer = new IsolateTimer(base)
  const rows: IsolateLimitRow[] = []
  for (const { model, mode, batches } of cases) {
    for (const batch of batches) {
      const cell = { model, mode, batch }
      // Model load, then n from one timing of 4 batches.
      await timer.timed(cell, 4)
      const msPerBatch = Math.max(0.005, ((await timer.timed(cell, 4)) - (await timer.timed(cell, 0))) / 4)
      const n = batchesPerWindow(msPerBatch)
      // One window's work untimed, and before the first cell the fresh isolate's warm-up.
      const warmUntil = performance.now() + warmUpMs
      do await timer.timed(cell, n)
      while (performance.now() < warmUntil)
      warmUpMs = 0
      const perRound: number[] = []
      for (let r = 0; r < rounds; r++) perRound.push(await timer.window(cell, n))
      rows.push({ model, mode, batch, itemsPerS: median(perRound), rounds: perRound })
    }
  }
  return rows
}

/**
 * `limit`'s cell, measured again in one window each time it is called: beside
 * served rows, one window after each of their rounds. This machine's speed
 * moves by up to two times from minute to minute, so a ceiling measured
 * minutes away from the rows it divides says more of the minute than of them.
 */
export function isolateLimitBeside(base: string, limit: IsolateLimitRow): { measure: () => Promise<void>; windows: number[] } {
  const timer = new IsolateTimer(base)
  const n = batchesPerWindow((limit.batch / limit.itemsPerS) * 1000)
  const windows: number[] = []
  return { windows, measure: async () => void windows.push(await timer.window(limit, n)) }
}

/** One cell's windows in a workerd isolate and in a Node process, taken in turn. */
export interface IsolateAgainstNode {
  batch: number
  isolate: number[]
  node: number[]
}

/**
 * `limit`'s cell (the OCR pipeline) in one workerd isolate against the same
 * work in a Node process on one ORT thread, one window each in turn, so that
 * the machine's drift hits both alike: what running in workerd costs the
 * model itself, with HTTP and the hop out of both figures.
 */
export async function isolateAgainstNode(base: string, limit: IsolateLimitRow, rounds: number, options: { quick: boolean }): Promise<IsolateAgainstNode> {
  const node = limitBeside({ threads: 1, instances: 1, batch: limit.batch }, options)
  const isolate = isolateLimitBeside(base, limit)
  const nodeWindows: number[] = []
  try {
    for (let r = 0; r < rounds; r++) {
      nodeWindows.push(await node.measure())
      await isolate.measure()
    }
  } finally {
    await node.stop()
  }
  return { batch: limit.batch, isolate: isolate.windows, node: nodeWindows }
}
