import type { InferenceSession, Tensor } from 'onnxruntime-web'
import { formatReceived } from '../batching/options.js'

export type { Tensor } from 'onnxruntime-web'

/** Where a model runs: WebGPU where an adapter exists, else WebAssembly (SIMD). */
export type Provider = 'webgpu' | 'wasm'

export interface LoadModelOptions {
  /** `'auto'` (default): WebGPU when an adapter exists, else WASM; or an explicit list, tried in order. */
  executionProviders?: 'auto' | Provider[]
  /**
   * WASM threads. ORT sets this once per process, at the first session: later
   * values are ignored. Default: 1 on Workers, ORT's choice elsewhere.
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
export interface OrtPlatform {
  Tensor: typeof Tensor
  /** Create a session for one provider (the platform wires up WebAssembly as its runtime demands). */
  createSession(bytes: Uint8Array, provider: Provider, numThreads: number | undefined): Promise<InferenceSession>
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

/** Load a model on `platform`, choosing the provider as `options` say. */
export async function loadModelOn(platform: OrtPlatform, source: ModelSource, options: LoadModelOptions = {}): Promise<Model> {
  const bytes = await bytesOf(platform, source)
  const { numThreads } = options
  if (numThreads !== undefined && (!Number.isInteger(numThreads) || numThreads < 1)) {
    throw new RangeError(`numThreads must be a positive integer, received ${formatReceived(numThreads)}`)
  }
  const wanted = options.executionProviders ?? 'auto'
  const providers: Provider[] = wanted === 'auto' ? ((await platform.hasWebGpu()) ? ['webgpu', 'wasm'] : ['wasm']) : wanted
  if (!Array.isArray(providers) || providers.length === 0 || providers.some((p) => p !== 'webgpu' && p !== 'wasm')) {
    throw new TypeError(`executionProviders must be 'auto' or a list of 'webgpu' and 'wasm', received ${formatReceived(wanted)}`)
  }
  let lastError: unknown
  for (const [i, provider] of providers.entries()) {
    try {
      const session = await platform.createSession(bytes, provider, numThreads)
      return new Model(session, provider, platform.Tensor)
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
  if (source && typeof (source as Response).arrayBuffer === 'function') {
    const response = source as Response
    if (!response.ok) throw new Error(`could not load the model: the response was ${response.status}`)
    return new Uint8Array(await response.arrayBuffer())
  }
  throw new TypeError(`loadModel() takes bytes, a URL or a Response, received ${formatReceived(source)}`)
}
