// The preprocessing's WebAssembly on Workers, which forbid compiling it from
// bytes: wrangler's default CompiledWasm rule (**/*.wasm) compiles it at
// upload, and this import is the compiled module.
import module from './preprocess.wasm'

export default module
