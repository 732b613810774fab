/**
 * `edgeserve/onnx` on workerd (chosen by the package's export conditions):
 * onnxruntime-web's WebAssembly as wrangler compiled it at upload, on one
 * thread (see wasm/workerd.ts). workerd has no WebGPU.
 */
import { createSession, ort } from '../../wasm/workerd.js'
import { onnxApi } from './entry.js'
import { fetchBytes } from './fetch-bytes.js'
import type { OrtPlatform } from './model.js'

const platform: OrtPlatform = {
  runtime: 'onnxruntime-web',
  Tensor: ort.Tensor,
  // Accepted as on every onnxruntime-web runtime; each session runs on WebAssembly all the same.
  providers: ['webgpu', 'wasm'],
  wasmFlags: ort.env.wasm,
  defaultNumThreads: () => ({ numThreads: 1, reason: 'workerd runs WebAssembly without threads' }),
  // Every session runs on WebAssembly: there is no other provider to ask for.
  createSession: (bytes) => createSession(bytes),
  autoProviders: async () => ['wasm'],
  fetchBytes,
}

export type { LoadModelOptions, Model, ModelSource, OrtRuntime, Padded, Provider, RuntimeOption, TensorInfo } from './entry.js'
export const { loadModel, stack, stackInt64, pad, split } = onnxApi({ web: platform })
/** onnxruntime-web's Tensor class (and type) for this runtime. */
export const Tensor = platform.Tensor
export type Tensor = InstanceType<typeof platform.Tensor>
