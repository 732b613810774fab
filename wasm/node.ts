/**
 * onnxruntime-web on Node: the package's `node` export, which finds its own
 * .wasm files next to it in node_modules and runs WebAssembly threads on
 * worker_threads. src/onnx/node.ts imports this module, not the package
 * itself, so that an app without onnxruntime-web is told what to install.
 */
export * as ort from 'onnxruntime-web'
