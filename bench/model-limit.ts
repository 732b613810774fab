/**
 * The OCR classifier's own limits, in process, with no HTTP and no batching
 * engine: what a served endpoint is measured against.
 *
 *  - `rows`: raw `session.run` items/s per batch size, on a prepared input.
 *  - `pipeline`: items/s of the whole in-process path on the bench's image,
 *    decode + preprocess + `session.run`, per batch size: the images of a
 *    batch are decoded and preprocessed one after another into the batch's
 *    input, then run.
 *
 * ORT fixes its thread count when a process's first session starts, so each
 * layout is measured in a process of its own:
 *
 *   tsx bench/model-limit.ts --threads 1|default|<n> [--quick]   one line of JSON
 *   tsx bench/model-limit.ts --instances <n> [--quick]           n one-thread instances on worker threads
 *   tsx bench/model-limit.ts <layout> --beside <batch> [--quick]  one window per stdin line (see limitBeside())
 *
 * and `measureModelLimit()` runs one such process per layout, ORT threads
 * {1, all cores} in one session and, where there are several cores, one
 * single-threaded instance per core (`loadModel`'s `instances`, as the OCR
 * example is shipped), and names the best of each (the bench runner records
 * it).
 */
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { CLS_CHANNELS, CLS_HEIGHT, CLS_INPUT_SIZE, CLS_WIDTH } from '../examples/ocr-direction/preprocess.js'
import { loadModel, type Model } from '../src/onnx/node.js'
import { ROOT, TSX, argValue, median, quick, runJsonChild } from './lib.js'
import { prepareBatch, prepareImages } from './prepare-work.js'
import { defaultClsModelPath } from '../scripts/models/ocr/cls-model-path.js'

export const BATCH_SIZES = [1, 4, 8, 16, 32, 64]
/** The image every served OCR request in the bench posts. */
export const BENCH_IMAGE = 'test/fixtures/ocr/hello-world.png'
const MODEL = defaultClsModelPath()

export interface LimitRow {
  batch: number
  itemsPerS: number
  msPerRun: number
}

/** One layout, measured in one process. */
export interface ThreadLimit {
  /** As asked: '1', 'default' or a number. */
  threads: string
  /** The count the model (each instance) really ran with (`model.numThreads`). */
  effectiveNumThreads: number
  /** Instances on worker threads (`model.instances`): 1 for a session in the process's own thread. */
  instances: number
  /** `session.run` alone, on an input built once. */
  rows: LimitRow[]
  /** Decode + preprocess + `session.run` of the bench's image. */
  pipeline: LimitRow[]
  /** Decode + preprocess of the bench's image alone, per item. */
  decodePreprocessMsPerItem: number
  /**
   * The batch size whose pipeline row was best, measured again in windows of
   * its own. The best of a dozen noisy rows is also the luckiest (the
   * winner's curse): the first pass only picks the batch size, and this
   * second, independent measurement says how fast it is.
   */
  pipelineBest: LimitRow
}

export interface Best {
  threads: number
  instances: number
  batch: number
  itemsPerS: number
}

export interface ModelLimit {
  configs: ThreadLimit[]
  /**
   * The in-process pipeline limit: the best layout's best batch size (by `pipelineBest`), at the
   * median of its windows beside the served OCR rows (the bench runner sets it; see limitBeside()).
   */
  pipelineLimit: Best
  /** Its windows beside the served rows, one after each round. */
  pipelineLimitBesideServedRows?: number[]
  /** What the same cell read in the limit phase (`pipelineBest`). */
  pipelineLimitBeforeServedRows?: number
  /** The best `session.run`-alone items/s, per layout. */
  runLimits: Best[]
}

/**
 * Measure threads {1, all cores} and one instance per core, each in a process of its own, and name the bests.
 * `env` goes to each process: EDGESERVE_ONNX_RUNTIME there says which runtime the limit is of.
 */
export async function measureModelLimit(options: { quick: boolean; env?: Record<string, string> }): Promise<ModelLimit> {
  const cores = availableParallelism()
  const layouts = [...new Set([1, cores])].map((threads) => ['--threads', String(threads)])
  if (cores > 1) layouts.push(['--instances', String(cores)])
  const configs: ThreadLimit[] = []
  for (const layout of layouts) {
    configs.push(await runJsonChild<ThreadLimit>('bench/model-limit.ts', [...(options.quick ? ['--quick'] : []), ...layout], options.env))
  }
  const best = (config: ThreadLimit, rows: LimitRow[]): Best => {
    const top = rows.reduce((a, b) => (b.itemsPerS > a.itemsPerS ? b : a))
    return { threads: config.effectiveNumThreads, instances: config.instances, batch: top.batch, itemsPerS: top.itemsPerS }
  }
  const pipelineBests = configs.map((c) => best(c, [c.pipelineBest]))
  return {
    configs,
    pipelineLimit: pipelineBests.reduce((a, b) => (b.itemsPerS > a.itemsPerS ? b : a)),
    runLimits: configs.map((c) => best(c, c.rows)),
  }
}

/** A layout and the batch size its windows run. */
type Layout = Pick<Best, 'threads' | 'instances' | 'batch'>

/** The command-line arguments that measure `layout`. */
const layoutArgs = (layout: Layout): string[] => (layout.instances > 1 ? ['--instances', String(layout.instances)] : ['--threads', String(layout.threads)])

/**
 * A layout's pipeline at one batch size, measured again beside other work
 * (the best layout's best cell beside the served rows, one thread beside a
 * workerd isolate's windows): a process that holds the model warm and runs
 * one window of the pipeline each time it is asked. This machine's speed
 * moves by up to two times from minute to minute, and the limit phase ends a
 * minute or more before the served OCR rows begin; a window taken right after
 * each served round is measured at the same speed the round was. The process
 * is idle in between.
 */
export function limitBeside(layout: Layout, options: { quick: boolean; env?: Record<string, string> }): { measure(): Promise<number>; stop(): Promise<void> } {
  const args = [TSX, 'bench/model-limit.ts', ...layoutArgs(layout), '--beside', String(layout.batch), ...(options.quick ? ['--quick'] : [])]
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...options.env }, stdio: ['pipe', 'pipe', 'inherit'] })
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  /** The next line that `accept` takes; the process's log lines (JSON with an `event`) in between are skipped. */
  const nextOf = async <V>(accept: (line: string) => V | undefined): Promise<V> => {
    for (;;) {
      const line = await lines.next()
      if (line.done) throw new Error(`bench/model-limit.ts ${args.slice(2).join(' ')} ended early`)
      const value = accept(line.value)
      if (value !== undefined) return value
    }
  }
  // Not awaited here: the model loads and warms up while the caller starts its server.
  const ready = nextOf((line) => (line === 'READY' ? true : undefined))
  ready.catch(() => undefined) // reported by the first measure()
  return {
    async measure() {
      await ready
      child.stdin.write('measure\n')
      return nextOf((line) => (line.startsWith('{"itemsPerS"') ? (JSON.parse(line) as { itemsPerS: number }).itemsPerS : undefined))
    },
    /** Resolves once the process has exited, so that what is measured next has the cores. */
    stop() {
      const exited =
        child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise<void>((resolve) => child.once('exit', () => resolve()))
      child.stdin.end()
      return exited
    },
  }
}

/** Items/s of one run of `step` (which handles `batch` items) through a window of `ms`. */
async function windowRate(step: () => Promise<unknown>, batch: number, ms: number): Promise<number> {
  let runs = 0
  const t0 = performance.now()
  while (performance.now() - t0 < ms) {
    await step()
    runs++
  }
  return (runs * batch * 1000) / (performance.now() - t0)
}

/**
 * Items/s of each step, the median of `repeats` windows each. The steps'
 * windows alternate, so drift on a shared machine hits them alike.
 */
async function itemsPerSecond(steps: (() => Promise<unknown>)[], batch: number, ms: number, repeats: number): Promise<number[]> {
  for (const step of steps) for (let i = 0; i < 3; i++) await step() // first runs of a shape allocate
  const rates = steps.map((): number[] => [])
  for (let r = 0; r < repeats; r++) {
    for (const [i, step] of steps.entries()) rates[i]!.push(await windowRate(step, batch, ms))
  }
  return rates.map(median)
}

/** First-pass windows: they pick each layout's batch size, which is then measured again in longer ones. */
const WINDOW_MS = quick ? 300 : 2000

/** The model in one layout, warmed up, and the steps the windows time. */
async function warmModel(threadsArg: string, instancesArg: string | undefined) {
  const options =
    instancesArg !== undefined ? { instances: Number(instancesArg), numThreads: 1 } : threadsArg === 'default' ? {} : { numThreads: Number(threadsArg) }
  const model: Model = await loadModel(MODEL, options)
  const input = model.inputNames[0]!
  const image = new Uint8Array(readFileSync(join(ROOT, BENCH_IMAGE)))
  const tensor = (data: Float32Array, n: number) => new model.Tensor('float32', data, [n, CLS_CHANNELS, CLS_HEIGHT, CLS_WIDTH])

  // Long enough for V8 to tier the WebAssembly up (Liftoff -> TurboFan).
  const warm = { [input]: tensor(new Float32Array(8 * CLS_INPUT_SIZE).fill(0.5), 8) }
  for (const t0 = performance.now(); performance.now() - t0 < (quick ? 1500 : 4000);) await model.run(warm)

  /** Decode and preprocess `n` copies of the image into one batch input, as `n` served requests and their batch do. */
  const prepare = (n: number): Float32Array => prepareBatch(image, n)
  for (const t0 = performance.now(); performance.now() - t0 < 300;) prepare(1) // warm the JavaScript up too
  /** The whole in-process path for a batch of `n`: decode, preprocess, run. */
  const pipelineStep = (n: number) => () => model.run({ [input]: tensor(prepare(n), n) })
  return { model, input, tensor, image, prepare, pipelineStep }
}

/** `--beside <batch>`: READY, then one window of the pipeline at that batch size per line read. */
async function serveBeside(threadsArg: string, instancesArg: string | undefined, batch: number): Promise<void> {
  const { model, pipelineStep } = await warmModel(threadsArg, instancesArg)
  const step = pipelineStep(batch)
  console.log('READY')
  for await (const _ of createInterface({ input: process.stdin })) {
    for (let i = 0; i < 3; i++) await step() // back from idle: caches and threads warm again
    console.log(JSON.stringify({ itemsPerS: await windowRate(step, batch, WINDOW_MS * 4) }))
  }
  await model.release()
}

async function measureHere(threadsArg: string, instancesArg: string | undefined): Promise<ThreadLimit> {
  const { model, input, tensor, image, prepare, pipelineStep } = await warmModel(threadsArg, instancesArg)
  const windowMs = WINDOW_MS
  const repeats = quick ? 3 : 5
  // Decode + preprocess alone (see prepareImages): windows at the start and
  // one more at each batch size below, so that the median spans the whole run
  // rather than a second of it. This machine's speed dips for a second or two
  // at a time, and a burst of windows can fall inside one dip.
  const PER_STEP = 32
  const prepareServed = async () => prepareImages(image, PER_STEP)
  const prepareRates: number[] = []
  for (let r = 0; r < repeats; r++) prepareRates.push(await windowRate(prepareServed, PER_STEP, windowMs / 2))

  const rows: LimitRow[] = []
  const pipeline: LimitRow[] = []
  for (const n of BATCH_SIZES) {
    prepareRates.push(await windowRate(prepareServed, PER_STEP, windowMs / 2))
    const feeds = { [input]: tensor(prepare(n), n) }
    const [runOnly, whole] = await itemsPerSecond([() => model.run(feeds), pipelineStep(n)], n, windowMs, repeats)
    rows.push({ batch: n, itemsPerS: runOnly!, msPerRun: (n * 1000) / runOnly! })
    pipeline.push({ batch: n, itemsPerS: whole!, msPerRun: (n * 1000) / whole! })
  }
  const pick = pipeline.reduce((a, b) => (b.itemsPerS > a.itemsPerS ? b : a))
  const [again] = await itemsPerSecond([pipelineStep(pick.batch)], pick.batch, windowMs * 2, repeats)
  const pipelineBest = { batch: pick.batch, itemsPerS: again!, msPerRun: (pick.batch * 1000) / again! }
  await model.release()
  return {
    threads: threadsArg,
    effectiveNumThreads: model.numThreads,
    instances: model.instances,
    rows,
    pipeline,
    decodePreprocessMsPerItem: 1000 / median(prepareRates),
    pipelineBest,
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const beside = argValue('--beside')
  if (beside !== undefined) await serveBeside(argValue('--threads') ?? 'default', argValue('--instances'), Number(beside))
  else console.log(JSON.stringify(await measureHere(argValue('--threads') ?? 'default', argValue('--instances'))))
}
