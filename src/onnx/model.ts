import type { InferenceSession, Tensor } from 'onnxruntime-web'
import { checkKnownOptions, formatReceived } from '../batching/options.js'
import { log } from '../metrics/log.js'
import { batchAxisProblem } from './batch-axis.js'
import { responseBytes } from './fetch-bytes.js'
import { noteLoadedModel } from './loaded-models.js'
import type { ModelSession, OrtPlatform, OrtRuntime, Provider } from './platform.js'
import { chooseRuntime, providersFor, type OrtRuntimes, type RuntimeOption } from './runtime-choice.js'
import { checkNumThreads, requestedThreads, withThreads } from './threads.js'

export type { Tensor } from 'onnxruntime-web'
export type { InstancesSession, ModelSession, OrtPlatform, OrtRuntime, Provider } from './platform.js'

export interface LoadModelOptions {
  /**
   * `'auto'` (default): on onnxruntime-node its CPU kernels; on
   * onnxruntime-web WebGPU when an adapter exists, else WASM. Or an explicit
   * list, tried in order: `'cpu'`, `'cuda'`, `'tensorrt'` run on
   * onnxruntime-node, `'webgpu'` and `'wasm'` on onnxruntime-web.
   */
  executionProviders?: 'auto' | Provider[] | undefined
  /**
   * Which onnxruntime runs the model. `'auto'` (default): on Node,
   * onnxruntime-node where it is installed (an optional peer dependency:
   * native kernels, about twice WebAssembly's speed), else onnxruntime-web;
   * elsewhere onnxruntime-web. On Node `EDGESERVE_ONNX_RUNTIME` sets it for
   * the process, and this option wins over it. `model.runtime` says which runs.
   */
  runtime?: RuntimeOption | undefined
  /**
   * Threads for inference. Default: what suits the runtime, on
   * Node the machine's cores (`os.availableParallelism()`), on Workers 1 (no
   * threads there), in a browser `navigator.hardwareConcurrency` when the page
   * is cross-origin isolated (threads need SharedArrayBuffer), else 1.
   * onnxruntime-node gives each session the count it asks for (its intra-op
   * threads). onnxruntime-web sizes its thread pool once per JavaScript realm
   * (thread, isolate, page), at the first model: a later model that asks for
   * another count runs with the first one's, and says so.
   * `model.numThreads` is the count a model really runs with.
   */
  numThreads?: number | undefined
  /**
   * Copies of the model that share each run, each on a worker thread of its
   * own with `numThreads` threads (default: its share of the cores). A run's
   * batch is cut along the first axis of every input into one slice per
   * idle instance, the slices run side by side, and the outputs are joined
   * back in order (a run that finds none idle runs whole on one): for models
   * whose items are independent of each other.
   * Default 1: the model runs in the caller's thread.
   *
   * `'auto'`: one single-threaded instance per thread the model would get
   * (the default of `numThreads`: on Node the machine's cores, or a thread
   * replica's share, or `EDGESERVE_NUM_THREADS`), or `cores / numThreads`
   * instances when `numThreads` is given; one instance where that comes to
   * one, where the runtime has no worker threads for them (Workers,
   * browsers), or where the model has no batch axis to cut.
   *
   * Why: ORT's own threads wait for each other at every step of a model,
   * and lose much of their speed when the server's work takes a core for a
   * moment; instances meet once a run. The run also leaves the caller's
   * thread free for HTTP (onnxruntime-node, too, runs a session on the
   * thread that calls it).
   */
  instances?: number | 'auto' | undefined
}

export interface TensorInfo {
  name: string
  /** e.g. 'float32', 'int64'; undefined for non-tensor values. */
  type: string | undefined
  /** Dimensions; a string is a symbolic (dynamic) axis such as 'batch'. */
  shape: (number | string)[]
}

export type ModelSource = Uint8Array | ArrayBuffer | string | URL | Response

/**
 * A loaded model. `run()` calls are serialized: one session runs one batch at
 * a time, which is what a batch queue hands it anyway. A model held as
 * instances cuts a run among the idle ones, or runs it whole on the least
 * busy one when none is idle, and each instance runs what it is given in
 * order: a batch in flight per instance keeps every instance busy.
 */
export class Model {
  readonly inputNames: readonly string[]
  readonly outputNames: readonly string[]
  readonly inputs: readonly TensorInfo[]
  readonly outputs: readonly TensorInfo[]
  /** The ORT session, when the model runs in this thread; undefined when it runs as instances on worker threads. */
  readonly session: InferenceSession | undefined
  /** The package whose sessions run the model: onnxruntime-node (native) or onnxruntime-web. */
  readonly runtime: OrtRuntime
  readonly provider: Provider
  /**
   * The Tensor class of the model's runtime, the class of its outputs. Its
   * inputs may be built with either runtime's class (or `stack()` and the
   * other helpers): each runtime reads a tensor's type, data and dims.
   */
  readonly Tensor: typeof import('onnxruntime-web').Tensor
  /** Threads this model (each of its instances) runs with: its own session's on onnxruntime-node, the count ORT's WebAssembly in that realm started with on onnxruntime-web. */
  readonly numThreads: number
  /** Copies of the model that share each run, on worker threads; 1 when it runs in this thread (`LoadModelOptions.instances`). */
  readonly instances: number
  private last: Promise<unknown> = Promise.resolve()
  /** Takes the model off `/-/routes` once it is released. */
  private readonly forget: () => void

  constructor(
    private readonly runner: ModelSession,
    how: { runtime: OrtRuntime; provider: Provider; Tensor: typeof import('onnxruntime-web').Tensor; numThreads: number; instances?: number },
  ) {
    this.runtime = how.runtime
    this.provider = how.provider
    this.Tensor = how.Tensor
    this.numThreads = how.numThreads
    this.instances = how.instances ?? 1
    this.session = this.instances === 1 ? (runner as InferenceSession) : undefined
    this.inputNames = runner.inputNames
    this.outputNames = runner.outputNames
    this.inputs = runner.inputMetadata.map(info)
    this.outputs = runner.outputMetadata.map(info)
    const { runtime, provider, numThreads, instances } = this
    this.forget = noteLoadedModel({ runtime, provider, numThreads, instances, inputs: [...this.inputNames], outputs: [...this.outputNames] })
  }

  run(feeds: Record<string, Tensor>): Promise<Record<string, Tensor>> {
    // Instances queue their slices themselves: a run may be sent while
    // another runs, so the next batch waits there rather than here.
    if (this.instances > 1) return this.runner.run(feeds)
    const result = this.last.then(
      () => this.runner.run(feeds),
      () => this.runner.run(feeds),
    )
    this.last = result.catch(() => undefined)
    return result
  }

  release(): Promise<void> {
    this.forget()
    return this.runner.release()
  }
}

function info(metadata: InferenceSession.ValueMetadata): TensorInfo {
  return metadata.isTensor ? { name: metadata.name, type: metadata.type, shape: [...metadata.shape] } : { name: metadata.name, type: undefined, shape: [] }
}

let warnedFallback = false
let warnedNativeFailed = false
/** Thread requests already warned about (asked -> running), so a fleet of replicas says it once. */
const warnedThreads = new Set<string>()

/** Load a model on one of `runtimes`, choosing the runtime, the provider and the thread count as `options` say. */
export async function loadModelOn(runtimes: OrtRuntimes, source: ModelSource, options: LoadModelOptions = {}): Promise<Model> {
  checkLoadModelOptions(options)
  if (options.numThreads !== undefined) checkNumThreads('numThreads', options.numThreads)
  const { platform, reason: runtimeChosenBy } = await chooseRuntime(runtimes, options.runtime, options.executionProviders, (message) => {
    // Said once per process: a fleet of replicas need not repeat it.
    if (warnedNativeFailed) return
    warnedNativeFailed = true
    console.warn(message)
  })
  const providers = await providersFor(platform, options.executionProviders)
  const bytes = await bytesOf(platform, source)
  const chosen = { runtime: platform.runtime, runtimeChosenBy }
  if (options.instances !== undefined && options.instances !== 1) {
    const held = await loadInstances(platform, bytes, providers, options, options.instances, chosen)
    if (held) return held
  }
  const asked = requestedThreads(platform, options.numThreads)
  const { value, numThreads } = await withThreads(platform, asked.numThreads, () => firstWorkingSession(platform, bytes, providers, asked.numThreads))
  const reason =
    numThreads === asked.numThreads ? asked.reason : `fixed when the first model loaded here (this one asked for ${asked.numThreads}: ${asked.reason})`
  const mismatch = `${asked.numThreads}->${numThreads}`
  if (numThreads !== asked.numThreads && options.numThreads !== undefined && !warnedThreads.has(mismatch)) {
    warnedThreads.add(mismatch)
    console.warn(
      `edgeserve: numThreads ${asked.numThreads} cannot take effect: onnxruntime-web runs ${numThreads} thread(s) here, ` +
        'sized once per thread or isolate when its first model loads (and 1 where WebAssembly threads are unavailable); ' +
        'load models that need another count in another worker thread',
    )
  }
  log.info('model loaded', { ...chosen, provider: value.provider, numThreads, numThreadsChosenBy: reason })
  return new Model(value.session, { runtime: platform.runtime, provider: value.provider, Tensor: platform.Tensor, numThreads })
}

/**
 * The model as `instances` copies on worker threads, or undefined where it
 * is to run in this thread after all: `'auto'` that comes to one instance,
 * on a runtime without worker threads, or for a model without a batch axis.
 */
async function loadInstances(
  platform: OrtPlatform,
  bytes: Uint8Array,
  providers: Provider[],
  options: LoadModelOptions,
  instances: number | 'auto',
  chosen: { runtime: OrtRuntime; runtimeChosenBy: string },
): Promise<Model | undefined> {
  const cores = requestedThreads(platform, undefined)
  const auto = instances === 'auto'
  const count = auto ? Math.floor(cores.numThreads / (options.numThreads ?? 1)) : instances
  if (count <= 1) return undefined
  if (!platform.startInstances) {
    if (auto) return undefined
    throw new TypeError(
      `instances: ${count} runs copies of a model on Node worker threads, which this runtime does not have; pass instances: 'auto' (one instance here, as many as the cores on Node) or leave it out`,
    )
  }
  const numThreads = options.numThreads ?? Math.max(1, Math.floor(cores.numThreads / count))
  const pool = await platform.startInstances(bytes, { count, numThreads, providers })
  const problem = batchAxisProblem(pool.inputMetadata.map(info), pool.outputMetadata.map(info))
  if (problem !== undefined) {
    await pool.release()
    if (auto) {
      log.info('model instances not used', { instances: 'auto', reason: `a run cannot be cut into slices of its batch: ${problem}` })
      return undefined
    }
    throw new TypeError(
      `instances: ${count} cuts each run's batch along the first axis of every input and output, but this model's ${problem}; leave instances out for this model`,
    )
  }
  const instancesChosenBy = auto
    ? `instances 'auto': ${cores.numThreads} thread(s) (${cores.reason}) as instances of ${options.numThreads ?? 1}`
    : 'the instances option'
  const numThreadsChosenBy =
    options.numThreads !== undefined ? 'the numThreads option' : `each instance's share of ${cores.numThreads} thread(s) (${cores.reason})`
  log.info('model loaded', { ...chosen, provider: pool.provider, numThreads: pool.numThreads, numThreadsChosenBy, instances: count, instancesChosenBy })
  return new Model(pool, { runtime: platform.runtime, provider: pool.provider, Tensor: platform.Tensor, numThreads: pool.numThreads, instances: count })
}

function checkInstances(value: unknown): void {
  if (value === 'auto') return
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new RangeError(`instances must be a positive integer or 'auto', received ${formatReceived(value)}`)
  }
}

function checkLoadModelOptions(options: unknown): void {
  // Only an object is options: paths.map(loadModel) passes each path's index there.
  if (typeof options !== 'object' || options === null) return
  checkKnownOptions('loadModel()', options, ['executionProviders', 'numThreads', 'instances', 'runtime'])
  const { instances } = options as LoadModelOptions
  if (instances !== undefined) checkInstances(instances)
}

/** A session on the first provider that can create one, falling back (and saying so once) to the next. */
async function firstWorkingSession(
  platform: OrtPlatform,
  bytes: Uint8Array,
  providers: Provider[],
  numThreads: number,
): Promise<{ session: InferenceSession; provider: Provider }> {
  let lastError: unknown
  for (const [i, provider] of providers.entries()) {
    try {
      return { session: await platform.createSession(bytes, provider, numThreads), provider }
    } catch (error) {
      lastError = error
      if (i < providers.length - 1 && !warnedFallback) {
        // Said once per process: a fleet of replicas need not repeat it.
        warnedFallback = true
        console.warn(`edgeserve: could not create a ${provider} session (${String(error)}); falling back to ${providers[i + 1]}`)
      }
    }
  }
  throw lastError
}

async function bytesOf(platform: OrtPlatform, source: ModelSource): Promise<Uint8Array> {
  if (source instanceof Uint8Array) return source
  if (source instanceof ArrayBuffer) return new Uint8Array(source)
  if (typeof source === 'string' || source instanceof URL) return platform.fetchBytes(source)
  if (source && typeof source.arrayBuffer === 'function') return responseBytes(source)
  throw new TypeError(`loadModel() takes bytes, a URL or a Response, received ${formatReceived(source)}`)
}
