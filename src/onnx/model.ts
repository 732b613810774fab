import type { InferenceSession, Tensor } from 'onnxruntime-web'
import { checkKnownOptions, formatReceived } from '../batching/options.js'
import { log } from '../metrics/log.js'
import { responseBytes } from './fetch-bytes.js'
import { checkNumThreads, requestedThreads, withThreads, type ThreadPlatform } from './threads.js'

export type { Tensor } from 'onnxruntime-web'

/** Where a model runs: WebGPU where an adapter exists, else WebAssembly (SIMD). */
export type Provider = 'webgpu' | 'wasm'

export interface LoadModelOptions {
  /** `'auto'` (default): WebGPU when an adapter exists, else WASM; or an explicit list, tried in order. */
  executionProviders?: 'auto' | Provider[]
  /**
   * WebAssembly threads for inference. Default: what suits the runtime, on
   * Node the machine's cores (`os.availableParallelism()`), on Workers 1 (no
   * threads there), in a browser `navigator.hardwareConcurrency` when the page
   * is cross-origin isolated (threads need SharedArrayBuffer), else 1.
   * onnxruntime-web sizes its thread pool once per JavaScript realm (thread,
   * isolate, page), at the first model: a later model that asks for another
   * count runs with the first one's, and says so. `model.numThreads` is the
   * count a model really runs with.
   */
  numThreads?: number
}

export interface TensorInfo {
  name: string
  /** e.g. 'float32', 'int64'; undefined for non-tensor values. */
  type: string | undefined
  /** Dimensions; a string is a symbolic (dynamic) axis such as 'batch'. */
  shape: (number | string)[]
}

export type ModelSource = Uint8Array | ArrayBuffer | string | URL | Response

/** What a runtime contributes: its onnxruntime-web entry and how it creates sessions. */
export interface OrtPlatform extends ThreadPlatform {
  Tensor: typeof Tensor
  /**
   * Create a session for one provider (the platform wires up WebAssembly as
   * its runtime demands). The thread count is already in `wasmFlags`.
   */
  createSession(bytes: Uint8Array, provider: Provider): Promise<InferenceSession>
  /** Whether WebGPU can be tried here. */
  hasWebGpu(): Promise<boolean>
  /** Read a model from a URL or path this runtime understands. */
  fetchBytes(source: string | URL): Promise<Uint8Array>
}

/**
 * A loaded model. `run()` calls are serialized: one session runs one batch at
 * a time, which is what a batch queue hands it anyway.
 */
export class Model {
  readonly inputNames: readonly string[]
  readonly outputNames: readonly string[]
  readonly inputs: readonly TensorInfo[]
  readonly outputs: readonly TensorInfo[]
  private last: Promise<unknown> = Promise.resolve()

  constructor(
    readonly session: InferenceSession,
    readonly provider: Provider,
    readonly Tensor: typeof import('onnxruntime-web').Tensor,
    /** WebAssembly threads this model runs with: the count ORT's runtime in this realm started with. */
    readonly numThreads: number,
  ) {
    this.inputNames = session.inputNames
    this.outputNames = session.outputNames
    this.inputs = session.inputMetadata.map(info)
    this.outputs = session.outputMetadata.map(info)
  }

  run(feeds: Record<string, Tensor>): Promise<Record<string, Tensor>> {
    const result = this.last.then(
      () => this.session.run(feeds),
      () => this.session.run(feeds),
    )
    this.last = result.catch(() => undefined)
    return result as Promise<Record<string, Tensor>>
  }

  release(): Promise<void> {
    return this.session.release()
  }
}

function info(metadata: InferenceSession.ValueMetadata): TensorInfo {
  return metadata.isTensor
    ? { name: metadata.name, type: metadata.type, shape: [...metadata.shape] }
    : { name: metadata.name, type: undefined, shape: [] }
}

let warnedFallback = false
/** Thread requests already warned about (asked -> running), so a fleet of replicas says it once. */
const warnedThreads = new Set<string>()

/** Load a model on `platform`, choosing the provider and the thread count as `options` say. */
export async function loadModelOn(platform: OrtPlatform, source: ModelSource, options: LoadModelOptions = {}): Promise<Model> {
  checkLoadModelOptions(options)
  const bytes = await bytesOf(platform, source)
  if (options.numThreads !== undefined) checkNumThreads('numThreads', options.numThreads)
  const wanted = options.executionProviders ?? 'auto'
  const providers: Provider[] = wanted === 'auto' ? ((await platform.hasWebGpu()) ? ['webgpu', 'wasm'] : ['wasm']) : wanted
  if (!Array.isArray(providers) || providers.length === 0 || providers.some((p) => p !== 'webgpu' && p !== 'wasm')) {
    throw new TypeError(`executionProviders must be 'auto' or a list of 'webgpu' and 'wasm', received ${formatReceived(wanted)}`)
  }
  const asked = requestedThreads(platform, options.numThreads)
  const { value, numThreads } = await withThreads(platform, asked.numThreads, () => firstWorkingSession(platform, bytes, providers))
  const reason = numThreads === asked.numThreads ? asked.reason : `fixed when the first model loaded here (this one asked for ${asked.numThreads}: ${asked.reason})`
  const mismatch = `${asked.numThreads}->${numThreads}`
  if (numThreads !== asked.numThreads && options.numThreads !== undefined && !warnedThreads.has(mismatch)) {
    warnedThreads.add(mismatch)
    console.warn(
      `edgeserve: numThreads ${asked.numThreads} cannot take effect: onnxruntime-web runs ${numThreads} thread(s) here, ` +
        'sized once per thread or isolate when its first model loads (and 1 where WebAssembly threads are unavailable); ' +
        'load models that need another count in another worker thread',
    )
  }
  log.info('model loaded', { provider: value.provider, numThreads, numThreadsChosenBy: reason })
  return new Model(value.session, value.provider, platform.Tensor, numThreads)
}

function checkLoadModelOptions(options: unknown): void {
  // Only an object is options: paths.map(loadModel) passes each path's index there.
  if (typeof options !== 'object' || options === null) return
  checkKnownOptions('loadModel()', options, ['executionProviders', 'numThreads'])
}

/** A session on the first provider that can create one, falling back (and saying so once) to the next. */
async function firstWorkingSession(platform: OrtPlatform, bytes: Uint8Array, providers: Provider[]): Promise<{ session: InferenceSession; provider: Provider }> {
  let lastError: unknown
  for (const [i, provider] of providers.entries()) {
    try {
      return { session: await platform.createSession(bytes, provider), provider }
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
  if (source && typeof (source as Response).arrayBuffer === 'function') return responseBytes(source as Response)
  throw new TypeError(`loadModel() takes bytes, a URL or a Response, received ${formatReceived(source)}`)
}
