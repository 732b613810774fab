/**
 * What each runtime of `edgeserve/onnx` contributes (its onnxruntime
 * package, its providers, how it creates sessions) and what a model runs on.
 */
import type { InferenceSession, Tensor } from 'onnxruntime-web'
import type { ThreadPlatform } from './threads.js'

/** The package whose sessions run a model. */
export type OrtRuntime = 'onnxruntime-web' | 'onnxruntime-node'

/**
 * Where a model runs. onnxruntime-web: WebGPU where an adapter exists, else
 * WebAssembly (SIMD). onnxruntime-node (Node): its native CPU kernels, or
 * CUDA or TensorRT where their binaries and a GPU are.
 */
export type Provider = 'webgpu' | 'wasm' | 'cpu' | 'cuda' | 'tensorrt'

/** What a `Model` runs on: a session in this thread, or instances on worker threads. */
export interface ModelSession {
  readonly inputNames: readonly string[]
  readonly outputNames: readonly string[]
  readonly inputMetadata: readonly InferenceSession.ValueMetadata[]
  readonly outputMetadata: readonly InferenceSession.ValueMetadata[]
  run(feeds: Record<string, Tensor>): Promise<Record<string, Tensor>>
  release(): Promise<void>
}

/** A model's instances on worker threads, as one session. */
export interface InstancesSession extends ModelSession {
  readonly provider: Provider
  /** ORT threads of each instance. */
  readonly numThreads: number
}

/** What a runtime contributes: its onnxruntime package and how it creates sessions. */
export interface OrtPlatform extends ThreadPlatform {
  /** The package whose sessions this platform creates. */
  runtime: OrtRuntime
  Tensor: typeof Tensor
  /** The providers `executionProviders` may list for this runtime. */
  providers: readonly Provider[]
  /** What `executionProviders: 'auto'` tries here, in order. */
  autoProviders(): Promise<Provider[]>
  /**
   * Create a session for one provider (the platform wires up WebAssembly as
   * its runtime demands). `numThreads` is the session's own count where the
   * runtime takes one per session; onnxruntime-web has it in `wasmFlags`.
   */
  createSession(bytes: Uint8Array, provider: Provider, numThreads: number): Promise<InferenceSession>
  /** Read a model from a URL or path this runtime understands. */
  fetchBytes(source: string | URL): Promise<Uint8Array>
  /** Start `count` instances of a model on worker threads; absent where the runtime has none to offer. */
  startInstances?(bytes: Uint8Array, options: { count: number; numThreads: number; providers: Provider[] }): Promise<InstancesSession>
}
