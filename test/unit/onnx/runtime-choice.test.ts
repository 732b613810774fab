/**
 * Which onnxruntime a model loads on, where onnxruntime-node is installed,
 * missing, broken, or cannot run at all (Workers, browsers). The import is
 * replaced here, so each case runs without changing what is installed.
 */
import { describe, expect, it, vi } from 'vitest'
import { importNative, missingProvider } from '../../../src/onnx/native.js'
import type { OrtPlatform } from '../../../src/onnx/model.js'
import { chooseRuntime, providersFor, type OrtRuntimes } from '../../../src/onnx/runtime-choice.js'

function platform(runtime: OrtPlatform['runtime']): OrtPlatform {
  return {
    runtime,
    Tensor: undefined as never,
    providers: runtime === 'onnxruntime-node' ? ['cpu', 'cuda', 'tensorrt'] : ['webgpu', 'wasm'],
    autoProviders: async () => (runtime === 'onnxruntime-node' ? ['cpu'] : ['wasm']),
    createSession: () => Promise.reject(new Error('not in these tests')),
    defaultNumThreads: () => ({ numThreads: 1, reason: 'test' }),
    fetchBytes: () => Promise.reject(new Error('not in these tests')),
  }
}

const web = platform('onnxruntime-web')
const native = platform('onnxruntime-node')
const notFound = Object.assign(new Error("Cannot find package 'onnxruntime-node' imported from /app/node_modules/edgeserve/dist/src/onnx/native.js"), {
  code: 'ERR_MODULE_NOT_FOUND',
})

function on(nativeImport: 'installed' | 'missing' | 'failed' | 'none', configured?: string): OrtRuntimes {
  return {
    web,
    ...(nativeImport === 'none'
      ? {}
      : {
          native: async () =>
            nativeImport === 'installed'
              ? { platform: native }
              : nativeImport === 'missing'
                ? { missing: notFound }
                : { failed: new Error('libonnxruntime.so.1: cannot open shared object file') },
        }),
    configuredRuntime: () => configured,
  }
}

const never = () => {
  throw new Error('no warning expected')
}

describe('choosing the runtime', () => {
  it("'auto' runs on onnxruntime-node where it is installed, on onnxruntime-web where it is not, and says why", async () => {
    expect(await chooseRuntime(on('installed'), undefined, undefined, never)).toEqual({ platform: native, reason: 'onnxruntime-node is installed' })
    expect(await chooseRuntime(on('missing'), 'auto', 'auto', never)).toEqual({ platform: web, reason: 'onnxruntime-node is not installed' })
    expect(await chooseRuntime(on('none'), undefined, undefined, never)).toEqual({ platform: web, reason: 'the only runtime here' })
  })

  it("'auto' falls back to onnxruntime-web from an onnxruntime-node that cannot load, warning with the reason", async () => {
    const warn = vi.fn()
    expect(await chooseRuntime(on('failed'), undefined, undefined, warn)).toEqual({ platform: web, reason: 'onnxruntime-node could not be loaded' })
    expect(warn).toHaveBeenCalledWith(
      'edgeserve: onnxruntime-node is installed but could not be loaded (libonnxruntime.so.1: cannot open shared object file); models run on onnxruntime-web',
    )
  })

  it('runs on the runtime forced, and says what to install when it is missing', async () => {
    expect((await chooseRuntime(on('installed'), 'onnxruntime-web', undefined, never)).platform).toBe(web)
    expect((await chooseRuntime(on('installed'), 'onnxruntime-node', undefined, never)).platform).toBe(native)
    await expect(chooseRuntime(on('missing'), 'onnxruntime-node', undefined, never)).rejects.toThrow(
      "loadModel(): runtime 'onnxruntime-node' needs onnxruntime-node, which is not installed: npm install onnxruntime-node --ignore-scripts " +
        "(its CPU binaries come in the package; its install script only downloads CUDA's)",
    )
    await expect(chooseRuntime(on('failed'), 'onnxruntime-node', undefined, never)).rejects.toThrow(
      "loadModel(): runtime 'onnxruntime-node' needs onnxruntime-node, which could not be loaded: libonnxruntime.so.1: cannot open shared object file",
    )
  })

  it('refuses onnxruntime-node where only onnxruntime-web runs, saying what to pass', async () => {
    await expect(chooseRuntime(on('none'), 'onnxruntime-node', undefined, never)).rejects.toThrow(
      "loadModel(): runtime 'onnxruntime-node' needs onnxruntime-node, which runs only on Node: here models run on onnxruntime-web (pass runtime: 'auto' or 'onnxruntime-web')",
    )
    await expect(chooseRuntime(on('none'), undefined, ['cuda'], never)).rejects.toThrow(
      'loadModel(): executionProviders ["cuda"] need onnxruntime-node, which runs only on Node',
    )
  })

  it("follows executionProviders to their runtime under 'auto', and needs onnxruntime-node for its own", async () => {
    expect(await chooseRuntime(on('installed'), undefined, ['wasm'], never)).toEqual({
      platform: web,
      reason: 'executionProviders ["wasm"] belong to onnxruntime-web',
    })
    expect((await chooseRuntime(on('installed'), 'auto', ['cuda', 'cpu'], never)).platform).toBe(native)
    await expect(chooseRuntime(on('missing'), undefined, ['cuda'], never)).rejects.toThrow(
      'loadModel(): executionProviders ["cuda"] need onnxruntime-node, which is not installed: npm install onnxruntime-node --ignore-scripts',
    )
    // The option wins: a forced runtime then checks the providers against its own (providersFor).
    expect((await chooseRuntime(on('installed'), 'onnxruntime-web', ['cpu'], never)).platform).toBe(web)
    await expect(providersFor(web, ['cpu'])).rejects.toThrow(
      "executionProviders must be 'auto' or a list of onnxruntime-web's providers here ('webgpu', 'wasm'), received [\"cpu\"]",
    )
    expect(await providersFor(native, 'auto')).toEqual(['cpu'])
    expect(await providersFor(native, ['tensorrt', 'cuda', 'cpu'])).toEqual(['tensorrt', 'cuda', 'cpu'])
  })

  it('EDGESERVE_ONNX_RUNTIME chooses for the process, the runtime option wins over it, and a bad value names the variable', async () => {
    expect(await chooseRuntime(on('installed', 'onnxruntime-web'), undefined, undefined, never)).toEqual({
      platform: web,
      reason: 'EDGESERVE_ONNX_RUNTIME=onnxruntime-web',
    })
    expect((await chooseRuntime(on('installed', 'onnxruntime-web'), 'onnxruntime-node', undefined, never)).platform).toBe(native)
    expect((await chooseRuntime(on('installed', ''), undefined, undefined, never)).platform).toBe(native)
    await expect(chooseRuntime(on('missing', 'onnxruntime-node'), undefined, undefined, never)).rejects.toThrow(
      'EDGESERVE_ONNX_RUNTIME=onnxruntime-node needs onnxruntime-node, which is not installed',
    )
    await expect(chooseRuntime(on('installed', 'node'), undefined, undefined, never)).rejects.toThrow(
      `EDGESERVE_ONNX_RUNTIME (set to "node"; unset it for 'auto') must be 'auto', 'onnxruntime-node' or 'onnxruntime-web', received "node"`,
    )
  })
})

describe('importing onnxruntime-node', () => {
  const shared = { defaultNumThreads: () => ({ numThreads: 1, reason: 'test' }), fetchBytes: () => Promise.reject(new Error('unused')) }

  it('tells a package that is not installed from one that fails to load', async () => {
    expect(await importNative(shared, () => Promise.reject(notFound))).toEqual({ missing: notFound })
    const broken = new Error("Cannot find module '../bin/napi-v6/linux/riscv64/onnxruntime_binding.node'")
    expect(await importNative(shared, () => Promise.reject(broken))).toEqual({ failed: broken })
  })

  it('makes a platform of the installed package, its CPU first', async () => {
    const imported = await importNative(shared)
    expect('platform' in imported && imported.platform.runtime).toBe('onnxruntime-node')
    expect('platform' in imported && (await imported.platform.autoProviders())).toEqual(['cpu'])
  })

  it('knows where CUDA and TensorRT cannot come from at all', () => {
    expect(missingProvider('cpu', '/nowhere')).toBeUndefined()
    expect(missingProvider('cuda', '/nowhere', 'darwin')).toBe(
      "executionProviders 'cuda' needs onnxruntime-node's CUDA binaries, which onnxruntime-node does not have for darwin; list 'cpu'",
    )
    // An unknown layout is left to ORT, which then says what it could not load.
    expect(missingProvider('tensorrt', undefined, 'linux')).toBeUndefined()
  })
})
