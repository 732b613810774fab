/**
 * onnxruntime-web is an optional peer dependency: only `edgeserve/onnx`
 * needs it, so an app that serves no model does not install its 140 MB.
 * Node reports a missing package as "Cannot find package"; this says what to
 * run instead. (Bundlers, for Workers and browsers, stop at build time with
 * their own "could not resolve onnxruntime-web".)
 */
export const MISSING_ONNX_RUNTIME = 'edgeserve/onnx needs onnxruntime-web, which is not installed: npm install onnxruntime-web'

export async function importOnnxRuntime<M>(load: () => Promise<M>): Promise<M> {
  try {
    return await load()
  } catch (error) {
    const { code, message } = error as { code?: unknown; message?: unknown }
    if (code === 'ERR_MODULE_NOT_FOUND' && String(message).includes("'onnxruntime-web'")) {
      throw new Error(MISSING_ONNX_RUNTIME, { cause: error })
    }
    throw error
  }
}
