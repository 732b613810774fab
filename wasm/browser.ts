/**
 * onnxruntime-web in a browser: the full bundle, with WebGPU where
 * `navigator.gpu.requestAdapter()` gives an adapter, and WASM SIMD otherwise.
 * ORT fetches its .wasm from `ort.env.wasm.wasmPaths` (by default next to
 * the bundle); serve `onnxruntime-web/dist` there or set the path.
 *
 * WebAssembly threads need SharedArrayBuffer, which a browser gives only to
 * a cross-origin isolated page (served with COOP `same-origin` and COEP
 * `require-corp`): there a model gets `navigator.hardwareConcurrency`
 * threads by default, elsewhere 1 (asking ORT for more would only make it
 * warn and fall back to 1).
 */
import * as ort from 'onnxruntime-web'
import { fetchBytes } from '../src/onnx/fetch-bytes.js'
import type { OrtPlatform } from '../src/onnx/model.js'

interface NavigatorGpu {
  gpu?: { requestAdapter(): Promise<unknown> }
  hardwareConcurrency?: number
}

export const platform: OrtPlatform = {
  Tensor: ort.Tensor,
  wasmFlags: ort.env.wasm,
  defaultNumThreads() {
    const isolated = (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === true && typeof SharedArrayBuffer === 'function'
    if (!isolated) return { numThreads: 1, reason: 'the page is not cross-origin isolated, so WebAssembly has no threads' }
    const cores = (globalThis.navigator as NavigatorGpu | undefined)?.hardwareConcurrency || 1
    return { numThreads: cores, reason: `the page is cross-origin isolated (navigator.hardwareConcurrency = ${cores})` }
  },
  createSession: (bytes, provider) => ort.InferenceSession.create(bytes, { executionProviders: [provider], graphOptimizationLevel: 'all' }),
  async hasWebGpu() {
    const gpu = (globalThis.navigator as NavigatorGpu | undefined)?.gpu
    if (!gpu) return false
    try {
      return (await gpu.requestAdapter()) != null
    } catch {
      return false
    }
  },
  fetchBytes,
}

export { ort }
