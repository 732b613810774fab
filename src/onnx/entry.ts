import { loadModelOn, type LoadModelOptions, type Model, type ModelSource, type OrtPlatform } from './model.js'
import { pad, split, stack, stackInt64 } from './tensors.js'

export type { LoadModelOptions, Model, ModelSource, Provider, TensorInfo } from './model.js'
export type { Padded } from './tensors.js'

/** The `edgeserve/onnx` API bound to one runtime's onnxruntime-web. */
export function onnxApi(platform: OrtPlatform) {
  const { Tensor } = platform
  return {
    /**
     * Load an ONNX model from bytes, a URL (or path, on Node) or a Response.
     * `executionProviders: 'auto'` picks WebGPU when an adapter exists, else
     * WASM, and falls back to WASM (saying so once) if WebGPU fails.
     */
    loadModel: (source: ModelSource, options?: LoadModelOptions): Promise<Model> => loadModelOn(platform, source, options),
    /** onnxruntime-web's Tensor class for this runtime. */
    Tensor,
    /** Stack equal-shaped items into `[N, ...shape]`. */
    stack: (items: readonly ArrayLike<number>[], shape: readonly number[], type?: 'float32' | 'int32') => stack(Tensor, items, shape, type),
    /** Stack token ids into an int64 `[N, length]`. */
    stackInt64: (items: readonly (BigInt64Array | readonly number[])[], length: number) => stackInt64(Tensor, items, length),
    /** Pad variable-length items (with a mask) to the longest or to one of the allowed sizes. */
    pad: (items: readonly ArrayLike<number>[], options?: Parameters<typeof pad>[2]) => pad(Tensor, items, options),
    /** Split a `[N, ...]` output into per-item views. */
    split,
  }
}
