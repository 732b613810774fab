/**
 * `edgeserve/onnx` in a browser (chosen by the package's export conditions):
 * WebGPU where `navigator.gpu.requestAdapter()` gives an adapter, and WASM
 * SIMD otherwise. A cross-origin isolated page gets
 * `navigator.hardwareConcurrency` threads by default, any other page 1
 * (asking ORT for more would only make it warn and fall back to 1).
 */
import { ort } from '../../wasm/browser.js'
import { onnxApi } from './entry.js'
import { fetchBytes } from './fetch-bytes.js'
import type { OrtPlatform } from './model.js'

interface NavigatorGpu {
  gpu?: { requestAdapter(): Promise<unknown> }
  hardwareConcurrency?: number
}

const platform: OrtPlatform = {
  runtime: 'onnxruntime-web',
  Tensor: ort.Tensor,
  providers: ['webgpu', 'wasm'],
  wasmFlags: ort.env.wasm,
  defaultNumThreads() {
    // WebAssembly threads need SharedArrayBuffer, which only a cross-origin isolated page has.
    const isolated = (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === true && typeof SharedArrayBuffer === 'function'
    if (!isolated) return { numThreads: 1, reason: 'the page is not cross-origin isolated, so WebAssembly has no threads' }
    const cores = (globalThis.navigator as NavigatorGpu | undefined)?.hardwareConcurrency || 1
    return { numThreads: cores, reason: `the page is cross-origin isolated (navigator.hardwareConcurrency = ${cores})` }
  },
  createSession: (bytes, provider) => ort.InferenceSession.create(bytes, { executionProviders: [provider], graphOptimizationLevel: 'all' }),
  // WebGPU where the page has an adapter, with WebAssembly to fall back on.
  autoProviders: async () => ((await hasWebGpu()) ? ['webgpu', 'wasm'] : ['wasm']),
  fetchBytes,
}

async function hasWebGpu(): Promise<boolean> {
  const gpu = (globalThis.navigator as NavigatorGpu | undefined)?.gpu
  if (!gpu) return false
  try {
    return (await gpu.requestAdapter()) != null
  } catch {
    return false
  }
}

export type { LoadModelOptions, Model, ModelSource, OrtRuntime, Padded, Provider, RuntimeOption, TensorInfo } from './entry.js'
export const { loadModel, stack, stackInt64, pad, split } = onnxApi({ web: platform })
/** onnxruntime-web's Tensor class (and type) for this runtime. */
export const Tensor = platform.Tensor
export type Tensor = InstanceType<typeof platform.Tensor>
