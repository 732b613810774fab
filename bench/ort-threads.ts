/**
 * How onnxruntime-web's own threads scale here, process by process:
 *
 *   npx tsx --conditions=edgeserve-source bench/ort-threads.ts [--processes 6] [--node-flags "--no-liftoff ..."]
 *   npx tsx --conditions=edgeserve-source bench/ort-threads.ts --timeline [--processes 3] [--seconds 20]
 *   npx tsx --conditions=edgeserve-source bench/ort-threads.ts --disturbed
 *
 * Each row is a fresh process that loads the OCR direction classifier,
 * warms it up for 2 s and then runs batches of 16 for 3 s; `--together`
 * rows are two one-thread processes running at the same time (two realms,
 * as two replicas on worker threads are). Prints a table and, last, one
 * line of JSON.
 *
 * `--timeline` prints, for each 2-thread process, its items/s in every half
 * second of a longer run: the slow and the fast rate take turns inside one
 * process, each for seconds at a time.
 *
 * `--disturbed` runs the rows beside another process that keeps one core
 * busy a quarter of the time (5 ms in every 20), as a server's own work or
 * a load generator would: a 2-thread session against two 1-thread realms.
 *
 * Why: on this 2-core machine a 2-thread session runs a batch of 16 in
 * about 20 ms at times and in about 35 ms at others, no faster than one
 * thread; two one-thread realms side by side always get both cores. What
 * was ruled out as the cause is in bench/limits.md.
 */
import { DISTURBANCE, argValue, median, runJsonChild, startDisturbance } from './lib.js'
import { defaultClsModelPath } from '../scripts/models/ocr/cls-model-path.js'

const MODEL = defaultClsModelPath()
const BATCH = 16
const WINDOW_MS = 500

interface Run {
  threads: number
  itemsPerS: number
  msPerBatch: number
  /** With --timeline: items/s in each half second after the warm-up. */
  windows?: number[]
}

/** In a child: one model at `threads`, warmed up, then batches of 16 for 3 s (or `timelineS`, by windows). */
async function measure(threads: number, timelineS: number | undefined): Promise<Run> {
  const { loadModel } = await import('../src/onnx/node.js')
  const { setLogLevel } = await import('../src/metrics/log.js')
  setLogLevel('warn')
  const model = await loadModel(MODEL, { numThreads: threads })
  const input = { [model.inputNames[0]!]: new model.Tensor('float32', new Float32Array(BATCH * 3 * 48 * 192).fill(0.5), [BATCH, 3, 48, 192]) }
  for (const t0 = performance.now(); performance.now() - t0 < 2000; ) await model.run(input)
  const times: number[] = []
  const windows: number[] = []
  const seconds = timelineS ?? 3
  for (const t0 = performance.now(); performance.now() - t0 < seconds * 1000; ) {
    let items = 0
    const w0 = performance.now()
    for (; performance.now() - w0 < WINDOW_MS; items += BATCH) {
      const t = performance.now()
      await model.run(input)
      times.push(performance.now() - t)
    }
    windows.push((items * 1000) / (performance.now() - w0))
  }
  const msPerBatch = median(times)
  return { threads, itemsPerS: (BATCH * 1000) / msPerBatch, msPerBatch, ...(timelineS === undefined ? {} : { windows }) }
}

/** One measurement in a fresh process; `nodeFlags` go to node itself (V8 flags, for instance). */
function child(threads: number, options: { nodeFlags?: string[]; timelineS?: number } = {}): Promise<Run> {
  const timeline = options.timelineS === undefined ? [] : ['--seconds', String(options.timelineS)]
  return runJsonChild<Run>('bench/ort-threads.ts', ['--child', String(threads), ...timeline], {}, options.nodeFlags)
}

const childThreads = argValue('--child')
if (childThreads !== undefined) {
  const seconds = argValue('--seconds')
  console.log(JSON.stringify(await measure(Number(childThreads), seconds === undefined ? undefined : Number(seconds))))
  process.exit(0)
}

const rows: { what: string; runs: Run[] }[] = []
const processes = Number(argValue('--processes') ?? (process.argv.includes('--timeline') ? 3 : 6))

if (process.argv.includes('--timeline')) {
  const timelineS = Number(argValue('--seconds') ?? 20)
  const runs: Run[] = []
  for (let i = 0; i < processes; i++) runs.push(await child(2, { timelineS }))
  rows.push({ what: `2 threads, items/s in each half second of ${timelineS} s`, runs })
  console.error(`| process | items/s in each half second (batches of ${BATCH}, 2 threads) |`)
  console.error('| --- | --- |')
  runs.forEach((run, i) => console.error(`| ${i + 1} | ${run.windows!.map((w) => w.toFixed(0)).join(' ')} |`))
} else {
  const disturbed = process.argv.includes('--disturbed')
  const disturbance = disturbed ? startDisturbance() : undefined
  const label = disturbed ? `, beside ${DISTURBANCE}` : ''
  try {
    // Extra node flags for the 2-thread processes, to test a cause: --node-flags "--no-liftoff --no-wasm-dynamic-tiering".
    const nodeFlags = argValue('--node-flags')?.split(' ').filter(Boolean) ?? []
    const twoThreads: Run[] = []
    for (let i = 0; i < processes; i++) twoThreads.push(await child(2, { nodeFlags }))
    rows.push({ what: `2 threads, one process at a time${label}`, runs: twoThreads })
    const oneThread: Run[] = []
    for (let i = 0; i < 2; i++) oneThread.push(await child(1))
    rows.push({ what: `1 thread, one process at a time${label}`, runs: oneThread })
    const together: Run[] = []
    for (let i = 0; i < 2; i++) together.push(...(await Promise.all([child(1), child(1)])))
    rows.push({ what: `1 thread, two processes at once (each)${label}`, runs: together })
  } finally {
    disturbance?.kill()
  }
  console.error(`| what | batch of ${BATCH}: ms per run, each process | items/s, each process |`)
  console.error('| --- | --- | --- |')
  for (const row of rows) {
    console.error(`| ${row.what} | ${row.runs.map((r) => r.msPerBatch.toFixed(1)).join(', ')} | ${row.runs.map((r) => r.itemsPerS.toFixed(0)).join(', ')} |`)
  }
}
console.log(JSON.stringify(rows))
