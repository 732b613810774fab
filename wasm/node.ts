/**
 * onnxruntime-web on Node: the package's `node` export, with its own wasm
 * files found next to it. Threads are allowed (ORT uses worker_threads).
 */
import * as ort from 'onnxruntime-web'
import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { fetchBytes } from '../src/onnx/fetch-bytes.js'
import type { OrtPlatform } from '../src/onnx/model.js'

export const platform: OrtPlatform = {
  Tensor: ort.Tensor,
  async createSession(bytes, provider, numThreads) {
    if (numThreads !== undefined) ort.env.wasm.numThreads = numThreads
    return ort.InferenceSession.create(bytes, { executionProviders: [provider], graphOptimizationLevel: 'all' })
  },
  // Node has no WebGPU.
  hasWebGpu: async () => false,
  // A URL is fetched; anything else is a file path (or file: URL).
  async fetchBytes(source) {
    const text = String(source)
    if (/^https?:/i.test(text)) return fetchBytes(text)
    return new Uint8Array(await readFile(text.startsWith('file:') ? fileURLToPath(text) : text))
  },
}

export { ort }
