/** `edgeserve/onnx` on workerd (chosen by the package's export conditions). */
import { platform } from '../../wasm/workerd.js'
import { onnxApi } from './entry.js'

export * from './entry.js'
export const { loadModel, stack, stackInt64, pad, split } = onnxApi(platform)
/** onnxruntime-web's Tensor class (and type) for this runtime. */
export const Tensor = platform.Tensor
export type Tensor = InstanceType<typeof platform.Tensor>
