/**
 * onnxruntime-node, the native runtime of `edgeserve/onnx` on Node: an
 * optional peer dependency, imported the first time a model may run on it.
 * Its CPU binaries come in the package; CUDA's and TensorRT's are what its
 * install script downloads (Linux x64), so a provider whose library is
 * absent is refused with that said, before ORT prints its own failure.
 */
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import type { InferenceSession } from 'onnxruntime-web'
import { InstancePool } from './instances/pool.js'
import type { OrtPlatform, Provider } from './platform.js'
import type { NativeImport } from './runtime-choice.js'

/** What the Node entry shares with the native platform: how threads and model files are found there. */
export type NodeShared = Pick<OrtPlatform, 'defaultNumThreads' | 'configuredNumThreads' | 'fetchBytes'>

/** The session options every session on Node gets, on either runtime, beside its provider and threads. */
export const NODE_SESSION_OPTIONS = { graphOptimizationLevel: 'all' } as const

/** The shared library each GPU provider loads from beside the binding, by platform, and the provider's name in words. */
const PROVIDER_LIBRARIES: Partial<Record<Provider, { name: string } & Partial<Record<NodeJS.Platform, string>>>> = {
  cuda: { name: 'CUDA', linux: 'libonnxruntime_providers_cuda.so', win32: 'onnxruntime_providers_cuda.dll' },
  tensorrt: { name: 'TensorRT', linux: 'libonnxruntime_providers_tensorrt.so', win32: 'onnxruntime_providers_tensorrt.dll' },
}

/** Why `provider` cannot run here, or undefined when it may be tried. */
export function missingProvider(provider: Provider, bindingDir: string | undefined, platform: NodeJS.Platform = process.platform): string | undefined {
  const libraries = PROVIDER_LIBRARIES[provider]
  if (!libraries) return undefined
  const library = libraries[platform]
  if (library === undefined) {
    return `executionProviders '${provider}' needs onnxruntime-node's ${libraries.name} binaries, which onnxruntime-node does not have for ${platform}; list 'cpu'`
  }
  if (bindingDir === undefined || existsSync(join(bindingDir, library))) return undefined
  return (
    `executionProviders '${provider}' needs onnxruntime-node's ${libraries.name} binaries, which are not installed (no ${library} in ${bindingDir}): ` +
    'they come from its install script, which downloads them (Linux x64, CUDA 12): run npm install onnxruntime-node with its scripts allowed ' +
    "(\"onnxruntime-node\": true in package.json's allowScripts) on a machine with a GPU; or list 'cpu'"
  )
}

/** Where onnxruntime-node's binding and its libraries are, or undefined if its layout is not the one known here. */
function bindingDirOf(entry: string): string | undefined {
  const dir = join(dirname(entry), '..', 'bin', 'napi-v6', process.platform, process.arch)
  return existsSync(dir) ? dir : undefined
}

/** Import onnxruntime-node and make its platform; `load` is the import, replaced in tests. */
export async function importNative(shared: NodeShared, load: () => Promise<unknown> = () => import('onnxruntime-node')): Promise<NativeImport> {
  let ort: typeof import('onnxruntime-web')
  try {
    const module = (await load()) as { default?: unknown }
    // A CommonJS package: its exports are the default export, and named ones where Node can find them.
    ort = (module.default ?? module) as typeof import('onnxruntime-web')
  } catch (error) {
    const { code, message } = error as { code?: unknown; message?: unknown }
    if (code === 'ERR_MODULE_NOT_FOUND' && String(message).includes("'onnxruntime-node'")) return { missing: error as Error }
    return { failed: error instanceof Error ? error : new Error(String(error)) }
  }
  let bindingDir: string | undefined
  try {
    bindingDir = bindingDirOf(createRequire(import.meta.url).resolve('onnxruntime-node'))
  } catch {
    bindingDir = undefined
  }
  const platform: OrtPlatform = {
    runtime: 'onnxruntime-node',
    Tensor: ort.Tensor,
    providers: ['cpu', 'cuda', 'tensorrt'],
    // A GPU provider is asked for by name: 'auto' never tries one that may be absent or slow to start.
    autoProviders: async () => ['cpu'],
    defaultNumThreads: shared.defaultNumThreads,
    configuredNumThreads: shared.configuredNumThreads,
    fetchBytes: shared.fetchBytes,
    async createSession(bytes, provider, numThreads) {
      const missing = missingProvider(provider, bindingDir)
      if (missing !== undefined) throw new Error(missing)
      const options: InferenceSession.SessionOptions = { ...NODE_SESSION_OPTIONS, executionProviders: [provider], intraOpNumThreads: numThreads }
      return ort.InferenceSession.create(bytes, options)
    },
    async startInstances(bytes, options) {
      // Each instance tries the providers in order; one whose binaries are absent is left out here, as a session in this thread would fall back from it.
      const usable = options.providers.filter((provider) => missingProvider(provider, bindingDir) === undefined)
      if (usable.length === 0) throw new Error(missingProvider(options.providers[0]!, bindingDir))
      return InstancePool.start(bytes, {
        ...options,
        providers: usable,
        runtime: 'onnxruntime-node',
        sessionOptions: NODE_SESSION_OPTIONS,
        Tensor: ort.Tensor,
      })
    },
  }
  return { platform }
}
