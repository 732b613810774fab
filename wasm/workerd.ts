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
import { fetchBytes } from '../src/onnx/fetch-bytes.js'
import type { OrtPlatform } from '../src/onnx/model.js'

/**
 * The compiled module comes from the Worker itself: wrangler's module
 * collector resolves a `.wasm` import against the importing file, not
 * through node_modules, so only the Worker's own entry can name the file
 * wherever npm put it:
 *
 * ```ts
 * import ortWasm from '../node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.wasm'
 * provideOrtWasm(ortWasm)
 * ```
 */
let ortWasm: WebAssembly.Module | undefined

export function provideOrtWasm(module: WebAssembly.Module): void {
  if (!(module instanceof WebAssembly.Module)) {
    throw new TypeError(
      "provideOrtWasm() needs the compiled module: import onnxruntime-web's dist/ort-wasm-simd-threaded.wasm " +
        'with a CompiledWasm rule in wrangler.toml and pass what the import gives',
    )
  }
  ortWasm = module
}

function compiledModule(): WebAssembly.Module {
  if (!ortWasm) {
    throw new Error(
      "edgeserve/onnx on Workers needs onnxruntime-web's WebAssembly, compiled by wrangler: in your Worker's entry, " +
        "import ortWasm from '<path to node_modules>/onnxruntime-web/dist/ort-wasm-simd-threaded.wasm' and call provideOrtWasm(ortWasm) " +
        '(wrangler.toml: [[rules]] type = "CompiledWasm", globs = ["**/ort-wasm-simd-threaded.wasm"], fallthrough = false)',
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

export const platform: OrtPlatform = {
  Tensor: ort.Tensor,
  wasmFlags: ort.env.wasm,
  defaultNumThreads: () => ({ numThreads: 1, reason: 'workerd runs WebAssembly without threads' }),
  async createSession(bytes) {
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
  },
  hasWebGpu: async () => false,
  fetchBytes,
}

export { ort }
