/**
 * onnxruntime-web in a browser: the full bundle, with WebGPU where
 * `navigator.gpu.requestAdapter()` gives an adapter, and WASM SIMD otherwise.
 * ORT fetches its .wasm from `ort.env.wasm.wasmPaths` (by default next to
 * the bundle); serve `onnxruntime-web/dist` there or set the path.
 */
import * as ort from 'onnxruntime-web'
import { fetchBytes } from '../src/onnx/fetch-bytes.js'
import type { OrtPlatform } from '../src/onnx/model.js'

interface NavigatorGpu {
  gpu?: { requestAdapter(): Promise<unknown> }
}

export const platform: OrtPlatform = {
  Tensor: ort.Tensor,
  async createSession(bytes, provider, numThreads) {
    if (numThreads !== undefined) ort.env.wasm.numThreads = numThreads
    return ort.InferenceSession.create(bytes, { executionProviders: [provider], graphOptimizationLevel: 'all' })
  },
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
