/**
 * How many threads a model runs with.
 *
 * onnxruntime-node takes the count per session (its intra-op threads), so
 * every native model runs with the count it asks for. onnxruntime-web keeps one thread pool per instance of its WebAssembly module and sizes
 * it once, from `env.wasm.numThreads`, when the first session starts that
 * instance. Each JavaScript realm has its own instance: the main thread, each
 * Node worker thread, each Worker isolate, each browser page or web worker.
 * So within one realm:
 *  - the first model loaded sets the thread count for every model after it;
 *  - a later model that asks for another count runs with the one in effect,
 *    says so once, and reports the count it really has as `model.numThreads`;
 *  - models that need different counts belong in different realms (replicas
 *    on worker threads, for example).
 * Sessions created with onnxruntime-web directly, before the first
 * `loadModel`, start the same instance out of edgeserve's sight: set
 * `ort.env.wasm.numThreads` before either, and `loadModel` follows it.
 */
import { formatReceived } from '../batching/options.js'

/** A thread count and why it was chosen, for the line `loadModel` logs. */
export interface ThreadChoice {
  numThreads: number
  reason: string
}

/** What a runtime contributes to the choice. */
export interface ThreadPlatform {
  /**
   * This realm's onnxruntime-web `env.wasm` flags: ORT reads `numThreads`
   * when its runtime starts. Absent for onnxruntime-node, whose sessions
   * each take their own count.
   */
  wasmFlags?: { numThreads?: number }
  /** The count that suits this runtime when nobody chose one. */
  defaultNumThreads(): ThreadChoice
  /**
   * A count the operator set for the whole process, outside the code (on
   * Node, `EDGESERVE_NUM_THREADS`), or undefined. It wins over every default,
   * a replica's share of the cores included, and loses only to `numThreads`.
   */
  configuredNumThreads?(): ThreadChoice | undefined
}

export function checkNumThreads(what: string, value: unknown): asserts value is number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new RangeError(`${what} must be a positive integer, received ${formatReceived(value)}`)
  }
}

let realmDefault: ThreadChoice | undefined

/**
 * Internal, for the runtimes: the thread count models loaded from now on in
 * this realm default to, in place of the runtime's own default. The Node
 * runtime calls it inside each worker-thread replica with that replica's
 * share of the cores, `max(1, floor(os.availableParallelism() / replicas))`,
 * so that 2 replicas on 2 cores run 1 ORT thread each rather than 2 each.
 * Each worker thread has its own ORT instance, so the shares add up to the
 * machine. Call it before the realm's first model: after that the count is
 * fixed (see above). `numThreads` on `loadModel` still wins; `undefined`
 * restores the runtime's default.
 */
export function setDefaultNumThreads(numThreads: number | undefined): void {
  if (numThreads === undefined) {
    realmDefault = undefined
    return
  }
  checkNumThreads('setDefaultNumThreads()', numThreads)
  realmDefault = { numThreads, reason: 'the default set for this thread by setDefaultNumThreads() (a replica’s share of the cores)' }
}

/** Per platform: the count its ORT runtime runs with, once the first session has started it. */
const running = new WeakMap<ThreadPlatform, Promise<number>>()

/**
 * The count a new model asks for: the option, else the operator's setting
 * for the process, else the realm's default, else what the app told
 * onnxruntime-web itself before the first model, else the runtime's default.
 */
export function requestedThreads(platform: ThreadPlatform, option: number | undefined): ThreadChoice {
  if (option !== undefined) return { numThreads: option, reason: 'the numThreads option' }
  const configured = platform.configuredNumThreads?.()
  if (configured) return configured
  if (realmDefault) return realmDefault
  const preset = platform.wasmFlags?.numThreads
  // Once edgeserve has started the runtime, the flag holds what it set.
  if (!running.has(platform) && typeof preset === 'number' && Number.isInteger(preset) && preset > 0) {
    return { numThreads: preset, reason: 'onnxruntime-web’s env.wasm.numThreads, set before the first model' }
  }
  return platform.defaultNumThreads()
}

/**
 * Create a session with `create`. The first call in a realm starts ORT's
 * runtime with `threads` (later calls wait for it, so that none changes the
 * flag before ORT has read it); every call resolves with the session and the
 * count the runtime really runs with: ORT lowers it to 1 where WebAssembly
 * threads are unavailable, and ignores it once started.
 */
export async function withThreads<S>(platform: ThreadPlatform, threads: number, create: () => Promise<S>): Promise<{ value: S; numThreads: number }> {
  const flags = platform.wasmFlags
  // A runtime without a realm-wide count gives each session the count it asks for.
  if (!flags) return { value: await create(), numThreads: threads }
  const started = running.get(platform)
  if (started) {
    const numThreads = await started
    return { value: await create(), numThreads }
  }
  flags.numThreads = threads
  const first = create()
  // Settled either way, ORT has read the flag: a failed model still started
  // the runtime, and a runtime that failed to start cannot start again.
  const inUse = () => flags.numThreads ?? threads
  running.set(platform, first.then(inUse, inUse))
  const value = await first
  return { value, numThreads: inUse() }
}
