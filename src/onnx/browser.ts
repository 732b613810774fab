/** `edgeserve/onnx` on browser (chosen by the package's export conditions). */
import { platform } from '../../wasm/browser.js'
import { onnxApi } from './entry.js'

export * from './entry.js'
export const { loadModel, Tensor, stack, stackInt64, pad, split } = onnxApi(platform)
