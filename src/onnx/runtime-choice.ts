/**
 * Which onnxruntime runs a model. On Node, onnxruntime-node where it is
 * installed (native CPU kernels, about twice WebAssembly's speed here, and
 * CUDA or TensorRT on a GPU machine), else onnxruntime-web; on Workers and in
 * browsers, onnxruntime-web alone. The same tensors and options go to either.
 */
import { formatReceived } from '../batching/options.js'
import type { OrtPlatform, OrtRuntime, Provider } from './platform.js'

/** What `loadModel`'s `runtime` option takes. */
export type RuntimeOption = 'auto' | OrtRuntime

const RUNTIME_OPTIONS: readonly RuntimeOption[] = ['auto', 'onnxruntime-node', 'onnxruntime-web']
const NATIVE_PROVIDERS: readonly Provider[] = ['cpu', 'cuda', 'tensorrt']
const WEB_PROVIDERS: readonly Provider[] = ['webgpu', 'wasm']

/** How to install the native runtime without the download its install script makes for CUDA. */
export const INSTALL_NATIVE = "npm install onnxruntime-node --ignore-scripts (its CPU binaries come in the package; its install script only downloads CUDA's)"

/** onnxruntime-node as Node imports it: a platform, or why there is none. */
export type NativeImport = { platform: OrtPlatform } | { missing: Error } | { failed: Error }

/** The runtimes an `edgeserve/onnx` entry offers. */
export interface OrtRuntimes {
  /** onnxruntime-web: every entry has it, and its Tensor builds the helpers' tensors, which either runtime takes. */
  web: OrtPlatform
  /** Node only: onnxruntime-node, imported on first use. */
  native?: () => Promise<NativeImport>
  /** The runtime the operator chose for the whole process, outside the code (on Node, EDGESERVE_ONNX_RUNTIME). */
  configuredRuntime?: () => string | undefined
}

/** A runtime and why, for the line `loadModel` logs. */
export interface RuntimeChoice {
  platform: OrtPlatform
  reason: string
}

export function checkRuntime(what: string, value: unknown): asserts value is RuntimeOption {
  if (!RUNTIME_OPTIONS.includes(value as RuntimeOption)) {
    throw new TypeError(
      `${what} must be ${RUNTIME_OPTIONS.map((r) => `'${r}'`)
        .join(', ')
        .replace(/, ([^,]*)$/, ' or $1')}, received ${formatReceived(value)}`,
    )
  }
}

/** Whose providers a list names: one runtime's, or a mix, or some no runtime has. */
function providersOwner(providers: readonly unknown[]): OrtRuntime | 'mixed' | undefined {
  const native = providers.filter((p) => NATIVE_PROVIDERS.includes(p as Provider)).length
  const web = providers.filter((p) => WEB_PROVIDERS.includes(p as Provider)).length
  if (native + web !== providers.length || providers.length === 0) return undefined
  if (native > 0 && web > 0) return 'mixed'
  return native > 0 ? 'onnxruntime-node' : 'onnxruntime-web'
}

/**
 * The runtime a model loads on: the `runtime` option, else the process's
 * setting, else the one its `executionProviders` belong to, else
 * onnxruntime-node where it can be imported and onnxruntime-web otherwise.
 */
export async function chooseRuntime(
  runtimes: OrtRuntimes,
  option: unknown,
  executionProviders: unknown,
  warnOnce: (message: string) => void,
): Promise<RuntimeChoice> {
  // `by` says why, in the log line; `asker` is who asked, in an error's first words.
  let wanted: RuntimeOption = 'auto'
  let by = 'the runtime option'
  let asker = `loadModel(): runtime '${String(option)}' needs`
  if (option !== undefined) {
    checkRuntime('runtime', option)
    wanted = option
  } else {
    const configured = runtimes.configuredRuntime?.()
    if (configured !== undefined && configured !== '') {
      checkRuntime(`EDGESERVE_ONNX_RUNTIME (set to ${JSON.stringify(configured)}; unset it for 'auto')`, configured)
      wanted = configured
      by = `EDGESERVE_ONNX_RUNTIME=${configured}`
      asker = `${by} needs`
    }
  }
  if (wanted === 'auto' && Array.isArray(executionProviders)) {
    const owner = providersOwner(executionProviders)
    if (owner === 'mixed') {
      throw new TypeError(
        `executionProviders mixes onnxruntime-node's providers (${NATIVE_PROVIDERS.join(', ')}) with onnxruntime-web's (${WEB_PROVIDERS.join(', ')}), received ${shown(executionProviders)}: list one runtime's`,
      )
    }
    if (owner !== undefined) {
      wanted = owner
      by = `executionProviders ${shown(executionProviders)} belong to ${owner}`
      asker = `loadModel(): executionProviders ${shown(executionProviders)} need`
    }
  }
  if (wanted === 'onnxruntime-web') return { platform: runtimes.web, reason: by }
  if (!runtimes.native) {
    if (wanted === 'auto') return { platform: runtimes.web, reason: 'the only runtime here' }
    throw new TypeError(`${asker} onnxruntime-node, which runs only on Node: here models run on onnxruntime-web (pass runtime: 'auto' or 'onnxruntime-web')`)
  }
  const native = await runtimes.native()
  if ('platform' in native) return { platform: native.platform, reason: wanted === 'auto' ? 'onnxruntime-node is installed' : by }
  if (wanted === 'auto') {
    if ('failed' in native) {
      warnOnce(`edgeserve: onnxruntime-node is installed but could not be loaded (${native.failed.message}); models run on onnxruntime-web`)
      return { platform: runtimes.web, reason: 'onnxruntime-node could not be loaded' }
    }
    return { platform: runtimes.web, reason: 'onnxruntime-node is not installed' }
  }
  if ('missing' in native) throw new Error(`${asker} onnxruntime-node, which is not installed: ${INSTALL_NATIVE}`, { cause: native.missing })
  throw new Error(`${asker} onnxruntime-node, which could not be loaded: ${native.failed.message}`, { cause: native.failed })
}

/** A list as it was written (providers are a few short names); anything else as the options' messages show it. */
function shown(value: unknown): string {
  return Array.isArray(value) ? JSON.stringify(value) : formatReceived(value)
}

/** The providers `executionProviders` asks for on `platform`, checked against those it has. */
export async function providersFor(platform: OrtPlatform, wanted: unknown): Promise<Provider[]> {
  if (wanted === undefined || wanted === 'auto') return platform.autoProviders()
  if (!Array.isArray(wanted) || wanted.length === 0 || wanted.some((p) => !platform.providers.includes(p as Provider))) {
    throw new TypeError(
      `executionProviders must be 'auto' or a list of ${platform.runtime}'s providers here (${platform.providers.map((p) => `'${p}'`).join(', ')}), received ${shown(wanted)}`,
    )
  }
  return wanted as Provider[]
}
