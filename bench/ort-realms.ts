/**
 * Both cores for one model without ORT's own threads: two onnxruntime-web
 * realms on worker threads, one ORT thread each, fed from the main thread.
 *
 *   npx tsx bench/ort-realms.ts [--disturbed]
 *
 * Rows, each for 6 s after a 2 s warm-up, as items/s in every half second:
 * - *split*: every batch of 32 is cut in two halves, one per realm, and the
 *   batch is done when both are (one model run, both cores);
 * - *whole*: each realm runs whole batches of 16, two batches in flight (as
 *   two instances of a model, or two replicas, would);
 * - *one realm, batches of 1*: what an unbatched model gets from one realm.
 *
 * `--disturbed` runs them beside a process that keeps one core busy 5 ms in
 * every 20, as bench/ort-threads.ts --disturbed does for ORT's own threads.
 * Why it is here: bench/limits.md, on ORT's two threads.
 *
 * The realms load onnxruntime-web directly, with the options loadModel uses
 * (WASM, graph optimization 'all'), so that the measure is of the layout
 * alone. Prints a table and, last, one line of JSON.
 */
import { Worker } from 'node:worker_threads'
import { DISTURBANCE, median, startDisturbance } from './lib.js'
import { defaultClsModelPath } from '../scripts/models/ocr/cls-model-path.js'

const MODEL = defaultClsModelPath()
const ITEM = 3 * 48 * 192
const WINDOW_MS = 500

// CommonJS, evaluated: the realm needs nothing of this repo but the model file.
const REALM_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
;(async () => {
  const ort = await import('onnxruntime-web')
  ort.env.wasm.numThreads = 1
  const bytes = require('node:fs').readFileSync(workerData.model)
  const session = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'], graphOptimizationLevel: 'all' })
  parentPort.on('message', async ({ data, n }) => {
    const outputs = await session.run({ [session.inputNames[0]]: new ort.Tensor('float32', data, [n, 3, 48, 192]) })
    const scores = outputs[session.outputNames[0]].data
    parentPort.postMessage(scores, [scores.buffer])
  })
  parentPort.postMessage('ready')
})()`

class Realm {
  private constructor(private readonly worker: Worker) {}

  static start(): Promise<Realm> {
    const worker = new Worker(REALM_SOURCE, { eval: true, workerData: { model: MODEL } })
    return new Promise((resolve, reject) => {
      worker.once('error', reject)
      worker.once('message', () => resolve(new Realm(worker)))
    })
  }

  /** One session.run of `n` items in this realm; the input's buffer moves there. A realm that dies rejects, not hangs. */
  run(n: number): Promise<void> {
    const data = new Float32Array(n * ITEM).fill(0.5)
    return new Promise((resolve, reject) => {
      const done = () => {
        this.worker.off('error', failed)
        resolve()
      }
      const failed = (error: Error) => {
        this.worker.off('message', done)
        reject(error)
      }
      this.worker.once('message', done)
      this.worker.once('error', failed)
      this.worker.postMessage({ data, n }, [data.buffer])
    })
  }

  stop(): Promise<number> {
    return this.worker.terminate()
  }
}

interface Row {
  what: string
  windows: number[]
  medianItemsPerS: number
}

/** Items/s in each half second of `seconds`, after a 2 s warm-up, of `work` run over and over by `lanes` lanes. */
async function timeline(work: (lane: number) => Promise<number>, lanes: number, seconds = 6): Promise<number[]> {
  let items = 0
  const runUntil = (until: number) =>
    Promise.all(
      Array.from({ length: lanes }, async (_, lane) => {
        while (performance.now() < until) {
          // Not `items += await work(lane)`: that reads `items` before the
          // await, and the lanes would overwrite each other's counts.
          const done = await work(lane)
          items += done
        }
      }),
    )
  await runUntil(performance.now() + 2000)
  const windows: number[] = []
  for (let i = 0; i < (seconds * 1000) / WINDOW_MS; i++) {
    items = 0
    const t0 = performance.now()
    await runUntil(t0 + WINDOW_MS)
    windows.push((items * 1000) / (performance.now() - t0))
  }
  return windows
}

const disturbed = process.argv.includes('--disturbed')
const disturbance = disturbed ? startDisturbance() : undefined
const realms = await Promise.all([Realm.start(), Realm.start()])
const rows: Row[] = []
const row = (what: string, windows: number[]) => rows.push({ what, windows, medianItemsPerS: median(windows) })
try {
  row('2 realms, each batch of 32 split between them', await timeline(async () => (await Promise.all(realms.map((realm) => realm.run(16))), 32), 1))
  row('2 realms, whole batches of 16, two in flight', await timeline(async (lane) => (await realms[lane]!.run(16), 16), 2))
  row('1 realm, batches of 1', await timeline(async () => (await realms[0]!.run(1), 1), 1))
} finally {
  disturbance?.kill()
  await Promise.all(realms.map((realm) => realm.stop()))
}

const label = disturbed ? `, beside ${DISTURBANCE}` : ''
console.error(`| layout${label} | median items/s | items/s in each half second |`)
console.error('| --- | ---: | --- |')
for (const r of rows) console.error(`| ${r.what} | ${r.medianItemsPerS.toFixed(0)} | ${r.windows.map((w) => w.toFixed(0)).join(' ')} |`)
console.log(JSON.stringify(rows))
