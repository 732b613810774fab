/**
 * `edgeserve/onnx` on Node (chosen by the package's export conditions):
 * onnxruntime-node where it is installed (an optional peer dependency, see
 * native.ts), else onnxruntime-web's `node` export, whose threads ORT runs
 * on worker_threads. By default a model gets every core: ORT-web's own
 * default, `min(4, ceil(cores / 2))`, leaves a 2-core machine on 1 thread,
 * where a batch runs no faster per item than a single request.
 */
import { readFile } from 'node:fs/promises'
import { availableParallelism } from 'node:os'
import { isAbsolute, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { onnxApi } from './entry.js'
import { fetchBytes } from './fetch-bytes.js'
import { importOnnxRuntime } from './import-runtime.js'
import { InstancePool } from './instances/pool.js'
import type { OrtPlatform } from './model.js'
import { importNative, NODE_SESSION_OPTIONS, type NodeShared } from './native.js'
import type { NativeImport } from './runtime-choice.js'
import { checkNumThreads } from './threads.js'

// Imported, not linked: an app without onnxruntime-web gets a message that says what to install.
const { ort } = await importOnnxRuntime(() => import('../../wasm/node.js'))

/** What both runtimes do alike here: threads and model files. */
const shared: NodeShared = {
  defaultNumThreads() {
    const cores = availableParallelism()
    return { numThreads: cores, reason: `this machine's cores (os.availableParallelism() = ${cores})` }
  },
  configuredNumThreads() {
    const value = process.env.EDGESERVE_NUM_THREADS
    if (value === undefined || value === '') return undefined
    const numThreads = Number(value)
    checkNumThreads(`EDGESERVE_NUM_THREADS (set to ${JSON.stringify(value)}; unset it for the default)`, numThreads)
    return { numThreads, reason: 'EDGESERVE_NUM_THREADS' }
  },
  // A URL is fetched; anything else is a file path (or file: URL).
  async fetchBytes(source) {
    const text = String(source)
    if (/^https?:/i.test(text)) return fetchBytes(text)
    const path = text.startsWith('file:') ? fileURLToPath(text) : text
    try {
      return new Uint8Array(await readFile(path))
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'ENOENT') throw error
      // The usual surprise: a relative path names a file beside the working directory, not beside the module.
      throw new Error(
        `loadModel() cannot find ${resolve(path)}` +
          (isAbsolute(path) ? '' : ` (${JSON.stringify(path)} is resolved against the working directory, ${process.cwd()})`) +
          "; to name a file beside your module, pass new URL('./model.onnx', import.meta.url)",
        { cause: error },
      )
    }
  },
}

const web: OrtPlatform = {
  ...shared,
  runtime: 'onnxruntime-web',
  Tensor: ort.Tensor,
  // Accepted as before; Node has no WebGPU, so a 'webgpu' session fails and falls back to the next listed.
  providers: ['webgpu', 'wasm'],
  autoProviders: async () => ['wasm'],
  wasmFlags: ort.env.wasm,
  createSession: (bytes, provider) => ort.InferenceSession.create(bytes, { ...NODE_SESSION_OPTIONS, executionProviders: [provider] }),
  startInstances: (bytes, options) =>
    InstancePool.start(bytes, { ...options, runtime: 'onnxruntime-web', sessionOptions: NODE_SESSION_OPTIONS, Tensor: ort.Tensor }),
}

// Imported once, when a model first may run on it: an app that forces onnxruntime-web never loads the native library.
let native: Promise<NativeImport> | undefined

export type { LoadModelOptions, Model, ModelSource, OrtRuntime, Padded, Provider, RuntimeOption, TensorInfo } from './entry.js'
export const { loadModel, stack, stackInt64, pad, split } = onnxApi({
  web,
  native: () => (native ??= importNative(shared)),
  configuredRuntime: () => process.env.EDGESERVE_ONNX_RUNTIME,
})
/** onnxruntime-web's Tensor class (and type); onnxruntime-node's sessions take its tensors too. */
export const Tensor = web.Tensor
export type Tensor = InstanceType<typeof web.Tensor>
