/** `edgeserve/onnx` on node (chosen by the package's export conditions). */
import { platform } from '../../wasm/node.js'
import { onnxApi } from './entry.js'

export * from './entry.js'
export const { loadModel, Tensor, stack, stackInt64, pad, split } = onnxApi(platform)
