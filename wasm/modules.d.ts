// Wrangler's CompiledWasm rule: importing a .wasm gives a compiled module.
declare module '*.wasm' {
  const module: WebAssembly.Module
  export default module
}

// Wrangler's Data rule: importing an .onnx model gives its bytes.
declare module '*.onnx' {
  const bytes: ArrayBuffer
  export default bytes
}
