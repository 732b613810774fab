/** `edgeserve/onnx` on browser (chosen by the package's export conditions). */
import { platform } from '../../wasm/browser.js'
import { onnxApi } from './entry.js'

export * from './entry.js'
export const { loadModel, stack, stackInt64, pad, split } = onnxApi(platform)
/** onnxruntime-web's Tensor class (and type) for this runtime. */
export const Tensor = platform.Tensor
export type Tensor = InstanceType<typeof platform.Tensor>
