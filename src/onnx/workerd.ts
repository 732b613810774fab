/** `edgeserve/onnx` on workerd (chosen by the package's export conditions). */
import { platform } from '../../wasm/workerd.js'
import { onnxApi } from './entry.js'

export * from './entry.js'
export const { loadModel, Tensor, stack, stackInt64, pad, split } = onnxApi(platform)
