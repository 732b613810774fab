/**
 * The page side of test/browser/webgpu.test.ts: bundled by esbuild at test
 * time with the `browser` condition, so `edgeserve/onnx` is src/onnx/browser.ts
 * and onnxruntime-web is its browser bundle. ORT's .wasm is left to its default
 * location, next to this bundle (the test serves onnxruntime-web/dist there).
 *
 * Everything the test needs is on `window.onnxPage`; results are plain arrays
 * so they cross page.evaluate() as JSON. `run()` loads the model with the
 * given `executionProviders`, runs every input through it (one after another,
 * timing each), releases it, and says which provider `loadModel` chose.
 */
import { Tensor, loadModel, type Provider } from 'edgeserve/onnx'

export interface AdapterReport {
  /** Whether `navigator.gpu` exists at all. */
  gpu: boolean
  /** `requestAdapter()` gave an adapter. */
  adapter: boolean
  vendor?: string
  architecture?: string
  isFallbackAdapter?: boolean
  error?: string
}

export interface InputSpec {
  /** A URL of raw little-endian float32 values. */
  url: string
  dims: number[]
}

export interface OutputData {
  dims: number[]
  type: string
  data: number[]
}

export interface RunReport {
  /** The provider `loadModel` chose. */
  provider: Provider
  inputNames: string[]
  outputNames: string[]
  loadMs: number
  runMs: number
  /** Milliseconds of each run, in input order. */
  runsMs: number[]
  /** One entry per input, in order: output name -> values. */
  outputs: Record<string, OutputData>[]
}

export interface OnnxPage {
  adapter(): Promise<AdapterReport>
  run(modelUrl: string, executionProviders: 'auto' | Provider[], inputs: InputSpec[]): Promise<RunReport>
}

/** What this script adds to `window` (typed here, not as a global augmentation). */
export interface PageWindow {
  onnxPage: OnnxPage
}

interface GpuAdapterLike {
  info?: { vendor?: string; architecture?: string; isFallbackAdapter?: boolean }
}
interface NavigatorWithGpu {
  gpu?: { requestAdapter(): Promise<GpuAdapterLike | null> }
}

async function adapter(): Promise<AdapterReport> {
  const gpu = (navigator as NavigatorWithGpu).gpu
  if (!gpu) return { gpu: false, adapter: false }
  try {
    const found = await gpu.requestAdapter()
    if (!found) return { gpu: true, adapter: false }
    const info = found.info ?? {}
    return {
      gpu: true,
      adapter: true,
      ...(info.vendor !== undefined && { vendor: info.vendor }),
      ...(info.architecture !== undefined && { architecture: info.architecture }),
      ...(info.isFallbackAdapter !== undefined && { isFallbackAdapter: info.isFallbackAdapter }),
    }
  } catch (error) {
    return { gpu: true, adapter: false, error: String(error) }
  }
}

async function readInput(spec: InputSpec): Promise<Tensor> {
  const response = await fetch(spec.url)
  if (!response.ok) throw new Error(`could not load ${spec.url}: ${response.status}`)
  return new Tensor('float32', new Float32Array(await response.arrayBuffer()), spec.dims)
}

async function run(modelUrl: string, executionProviders: 'auto' | Provider[], inputs: InputSpec[]): Promise<RunReport> {
  const tensors = await Promise.all(inputs.map(readInput))
  const loadStarted = performance.now()
  const model = await loadModel(modelUrl, { executionProviders })
  const loadMs = performance.now() - loadStarted
  try {
    const inputName = model.inputNames[0]!
    const runStarted = performance.now()
    const outputs: Record<string, OutputData>[] = []
    const runsMs: number[] = []
    for (const tensor of tensors) {
      const started = performance.now()
      const result = await model.run({ [inputName]: tensor })
      runsMs.push(performance.now() - started)
      const plain: Record<string, OutputData> = {}
      for (const [name, value] of Object.entries(result)) {
        // getData() downloads GPU-resident outputs too; with default options they are on the CPU already.
        const data = (await value.getData()) as Float32Array
        plain[name] = { dims: [...value.dims], type: value.type, data: Array.from(data) }
      }
      outputs.push(plain)
    }
    return {
      provider: model.provider,
      inputNames: [...model.inputNames],
      outputNames: [...model.outputNames],
      loadMs,
      runMs: performance.now() - runStarted,
      runsMs,
      outputs,
    }
  } finally {
    await model.release()
  }
}

const api: OnnxPage = { adapter, run }
;(window as unknown as PageWindow).onnxPage = api
