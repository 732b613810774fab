import { loadModel, type LoadModelOptions, type Model } from 'edgeserve/onnx'

/**
 * A model loaded on first use, once. Workers cap start-up at one second, so
 * the examples load their model with the first request (or the first
 * `/-/healthz`), not when the replica is constructed. A failed load is
 * forgotten, so the next call tries again.
 */
export function lazyModel(bytes: () => Promise<Uint8Array>, options?: LoadModelOptions): () => Promise<Model> {
  let model: Promise<Model> | undefined
  return () =>
    (model ??= bytes()
      .then((b) => loadModel(b, options))
      .catch((error: unknown) => {
        model = undefined
        throw error
      }))
}
