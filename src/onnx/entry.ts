import { loadModelOn, type LoadModelOptions, type Model, type ModelSource } from './model.js'
import type { OrtRuntimes } from './runtime-choice.js'
import { pad, split, stack, stackInt64 } from './tensors.js'

export type { LoadModelOptions, Model, ModelSource, OrtRuntime, Provider, TensorInfo } from './model.js'
export type { RuntimeOption } from './runtime-choice.js'
export type { Padded } from './tensors.js'

/** The `edgeserve/onnx` API bound to one runtime's onnxruntime packages. */
export function onnxApi(runtimes: OrtRuntimes) {
  // onnxruntime-web's class: every runtime reads a tensor's type, data and dims, so either kind of session takes these.
  const { Tensor } = runtimes.web
  return {
    /**
     * Load an ONNX model from bytes, a URL (or path, on Node) or a Response.
     * On Node it runs on onnxruntime-node where that is installed, else on
     * onnxruntime-web (`runtime` chooses). `executionProviders: 'auto'`
     * picks native CPU kernels on onnxruntime-node; on onnxruntime-web
     * WebGPU when an adapter exists, else WASM, falling back to WASM (saying
     * so once) if WebGPU fails.
     */
    loadModel: (source: ModelSource, options?: LoadModelOptions): Promise<Model> => loadModelOn(runtimes, source, options),
    /** onnxruntime-web's Tensor class for this runtime; onnxruntime-node's sessions take its tensors too. */
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
