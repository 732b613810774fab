/**
 * Shared onnxruntime-web setup for the verify and benchmark scripts.
 *
 * numThreads is pinned to 1 so results and timings match what a single-core
 * serverless worker would see, and so runs are reproducible on CI.
 */
import * as ort from 'onnxruntime-web'

ort.env.wasm.numThreads = 1

export { ort }

export async function createSession(model: string | Uint8Array): Promise<ort.InferenceSession> {
  const opts: ort.InferenceSession.SessionOptions = { executionProviders: ['wasm'] }
  // Two calls because create() is overloaded separately for paths and bytes.
  return typeof model === 'string' ? ort.InferenceSession.create(model, opts) : ort.InferenceSession.create(model, opts)
}

/** An output tensor by name, failing loudly instead of returning undefined. */
export function outputTensor(result: ort.InferenceSession.OnnxValueMapType, name: string): ort.Tensor {
  const tensor = result[name]
  if (!tensor) throw new Error(`model has no output named ${JSON.stringify(name)}`)
  return tensor
}
