/**
 * onnxruntime-web in a browser: the full bundle, with WebGPU and WASM SIMD.
 * ORT fetches its .wasm from `ort.env.wasm.wasmPaths` (by default next to
 * the bundle); serve `onnxruntime-web/dist` there or set the path.
 *
 * WebAssembly threads need SharedArrayBuffer, which a browser gives only to
 * a cross-origin isolated page (served with COOP `same-origin` and COEP
 * `require-corp`); elsewhere ORT runs on one thread.
 */
export * as ort from 'onnxruntime-web'
