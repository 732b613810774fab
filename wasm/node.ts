/**
 * onnxruntime-web on Node: the package's `node` export, with its own wasm
 * files found next to it. Threads are allowed (ORT uses worker_threads).
 */
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { importOnnxRuntime } from '../src/onnx/import-runtime.js'
import type { OrtPlatform } from '../src/onnx/model.js'

// Imported, not linked: an app without onnxruntime-web gets a message that says what to install.
const ort = await importOnnxRuntime(() => import('onnxruntime-web'))

export const platform: OrtPlatform = {
  Tensor: ort.Tensor,
  async createSession(bytes, provider, numThreads) {
    if (numThreads !== undefined) ort.env.wasm.numThreads = numThreads
    return ort.InferenceSession.create(bytes, { executionProviders: [provider], graphOptimizationLevel: 'all' })
  },
  // Node has no WebGPU.
  hasWebGpu: async () => false,
  async fetchBytes(source) {
    const text = String(source)
    if (/^https?:/i.test(text)) {
      const response = await fetch(text)
      if (!response.ok) throw new Error(`could not load the model from ${text}: ${response.status}`)
      return new Uint8Array(await response.arrayBuffer())
    }
    return new Uint8Array(await readFile(text.startsWith('file:') ? fileURLToPath(text) : text))
  },
}

export { ort }
