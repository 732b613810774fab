/**
 * onnxruntime-web inside workerd (Cloudflare Workers, wrangler dev).
 *
 * workerd forbids compiling WebAssembly from bytes at run time ("Wasm code
 * generation disallowed by embedder"). Wrangler's CompiledWasm rule compiles
 * ORT's .wasm when the Worker is uploaded, and the import below is that
 * `WebAssembly.Module`. ORT has no option that accepts a compiled module, so
 * while the first session is created, `WebAssembly.instantiate` is pointed
 * at it. ORT instantiates its runtime once per isolate; later sessions reuse it.
 *
 * The `onnxruntime-web/wasm` entry: workerd has no WebGPU, and no threads.
 */
import * as ort from 'onnxruntime-web/wasm'
// Compiled by wrangler when the Worker is uploaded: its default CompiledWasm
// rule (`**/*.wasm`) makes this import a `WebAssembly.Module`. The bare
// specifier goes through onnxruntime-web's own exports, so it resolves
// wherever npm put the package, and a Worker that never imports
// edgeserve/onnx does not carry it (14 MB, 3.7 MB gzipped).
import ortWasm from 'onnxruntime-web/ort-wasm-simd-threaded.wasm'

function compiledModule(): WebAssembly.Module {
  if (!(ortWasm instanceof WebAssembly.Module)) {
    throw new Error(
      "edgeserve/onnx on Workers needs onnxruntime-web's WebAssembly compiled by wrangler, but " +
        "'onnxruntime-web/ort-wasm-simd-threaded.wasm' was not imported as a WebAssembly.Module: wrangler's default " +
        'CompiledWasm rule for **/*.wasm does that, unless a [[rules]] entry in wrangler.toml matches .wasm files ' +
        'first (give such a rule fallthrough = true, or leave .wasm to the default)',
    )
  }
  return ortWasm
}

/**
 * Point `WebAssembly.instantiate` at the compiled module while `create`
 * makes the first session, which instantiates ORT's runtime.
 */
async function withCompiledRuntime<R>(module: WebAssembly.Module, create: () => Promise<R>): Promise<R> {
  ort.env.wasm.proxy = false
  // Any non-empty binary makes ORT use the glue bundled into this entry
  // instead of importing it from `import.meta.url` (undefined in workerd),
  // and stops it fetching the .wasm. These bytes are never compiled.
  ort.env.wasm.wasmBinary = new Uint8Array([0])
  const original = WebAssembly.instantiate
  const patched = async (source: unknown, imports?: WebAssembly.Imports) => {
    if (source instanceof WebAssembly.Module) return original(source, imports)
    const instance = await original(module, imports)
    return { instance, module }
  }
  ;(WebAssembly as { instantiate: unknown }).instantiate = patched
  try {
    return await create()
  } finally {
    WebAssembly.instantiate = original
  }
}

/**
 * Settles when the first session has. ORT instantiates its runtime once (and
 * a failed start is final), so later sessions need no patched instantiate:
 * patching only once also keeps two overlapping patches from restoring each
 * other's stand-in.
 */
let firstSession: Promise<unknown> | undefined

/**
 * A session for `bytes` on ORT's WebAssembly, compiled by wrangler: the
 * first one starts ORT's runtime from the compiled module, later ones wait
 * for it. workerd has no WebGPU, and no threads.
 */
export async function createSession(bytes: Uint8Array): Promise<ort.InferenceSession> {
  // Whatever was asked: workerd has no SharedArrayBuffer for threads.
  ort.env.wasm.numThreads = 1
  const create = () => ort.InferenceSession.create(bytes, { executionProviders: ['wasm'], graphOptimizationLevel: 'all' })
  if (firstSession) {
    await firstSession
    return create()
  }
  // Throws, starting nothing, until the Worker has provided the module.
  const module = compiledModule()
  const session = withCompiledRuntime(module, create)
  firstSession = session.catch(() => undefined)
  return session
}

export { ort }
