/**
 * `edgeserve/onnx` in a real browser: the browser build (src/onnx/browser.ts,
 * picked by the package's `browser` export condition) bundled by esbuild,
 * served from loopback with onnxruntime-web's dist files next to the bundle,
 * and driven in headless Chromium with and without WebGPU.
 *
 * Chromium flags that give WebGPU here (Debian Chromium 156, no GPU, no
 * display): the software adapter (SwiftShader, `isFallbackAdapter: true`)
 * needs only `--enable-unsafe-webgpu`. The test launches Chromium with
 * exactly this command line (Playwright's own defaults are switched off):
 *
 *   chromium --headless --no-sandbox --disable-background-networking \
 *     --disable-component-update --no-first-run --enable-unsafe-webgpu
 *
 * (plus `--remote-debugging-pipe` and a throwaway `--user-data-dir`, which
 * Playwright needs to drive it). Without `--enable-unsafe-webgpu`,
 * `navigator.gpu` exists but `requestAdapter()` resolves to null ("No
 * available adapters."). Also tried, each added to `--enable-unsafe-webgpu`:
 * `--use-angle=swiftshader`, `--enable-features=Vulkan`,
 * `--use-webgpu-adapter=swiftshader`, `--enable-unsafe-swiftshader` (which
 * Playwright adds by default), `--disable-gpu`: the same SwiftShader adapter
 * every time, so none is needed. `--enable-unsafe-swiftshader` without
 * `--enable-unsafe-webgpu` gives no adapter.
 *
 * Measured here: WebGPU and WASM outputs (softmax probabilities) differ by at
 * most ~5e-7 (asserted < 1e-3), with all 157 nodes on the WebGPU provider;
 * the page's WASM output equals Node's bit for bit. The first WebGPU run is
 * slow (5 s idle, 30 s on a busy 2-core machine): SwiftShader compiles every
 * shader on the CPU.
 */
import { readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { requireChromium } from '../support/chromium.js'
import { WEBGPU_FLAGS, bundlePage, launchChromium, serveFiles, type FileServer } from '../support/browser-page.js'
import type { Browser, ConsoleMessage, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decodeImage } from '../../examples/ocr-direction/image.js'
import { PADDLE_CLS_THRESH, clsPostprocessBatch } from '../../examples/ocr-direction/postprocess.js'
import { CLS_INPUT_SIZE, clsPreprocessBatch } from '../../examples/ocr-direction/preprocess.js'
import { defaultClsModelPath } from '../../scripts/models/ocr/cls-model-path.js'
import { loadModel as loadModelNode, Tensor as NodeTensor } from '../../src/onnx/node.js'
import type { OcrManifest } from '../../scripts/models/ocr/fixtures.js'
import type { Provider } from '../../src/onnx/model.js'
import type { InputSpec, PageWindow, RunReport } from './onnx-page/main.js'
import { mulberry32 } from '../support/prng.js'

const PAGE_ENTRY = fileURLToPath(new URL('./onnx-page/main.ts', import.meta.url))
const FIXTURES = fileURLToPath(new URL('../fixtures/ocr/', import.meta.url))
const MODEL = defaultClsModelPath()

/** WebGPU (SwiftShader) against WASM: both float32, different kernels and summation orders. */
const WEBGPU_TOLERANCE = 1e-3

// --- inputs ------------------------------------------------------------------

const manifest = JSON.parse(readFileSync(join(FIXTURES, 'manifest.json'), 'utf8')) as OcrManifest
/** One upright and one upside-down fixture: real text, with confident (saturated) probabilities. */
const FIXTURES_USED = [manifest.images.find((m) => m.angle === 0)!, manifest.images.find((m) => m.angle === 180)!]

/**
 * The batch both providers run: [4, 3, 48, 192], the two fixtures preprocessed
 * in Node as the server would, then two pseudo-random items in the model's
 * normalized range [-1, 1] (their probabilities are far from 0 and 1, so a
 * difference between providers cannot hide in a saturated softmax). One shape
 * only: every new shape costs WebGPU-on-SwiftShader seconds of shader compiling.
 */
const INPUT = (() => {
  const images = FIXTURES_USED.map((m) => decodeImage(new Uint8Array(readFileSync(join(FIXTURES, m.file)))))
  const fixtures = clsPreprocessBatch(images).data
  const data = new Float32Array(4 * CLS_INPUT_SIZE)
  data.set(fixtures)
  const next = mulberry32(20240517)
  for (let i = fixtures.length; i < data.length; i++) data[i] = next() * 2 - 1
  return { data, dims: [4, 3, 48, 192] }
})()
const INPUTS: InputSpec[] = [{ url: '/inputs/batch.f32', dims: INPUT.dims }]

// --- helpers -------------------------------------------------------------------

/** Largest |a - b| over two equally long arrays. */
function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length)
  let max = 0
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i]! - b[i]!))
  return max
}

/** Largest difference between two runs' outputs, over every input and output name. */
function runDiff(a: RunReport, b: RunReport): number {
  expect(a.outputs.length).toBe(b.outputs.length)
  let max = 0
  a.outputs.forEach((outputs, i) => {
    expect(Object.keys(outputs)).toEqual(Object.keys(b.outputs[i]!))
    for (const [name, value] of Object.entries(outputs)) {
      expect(value.dims).toEqual(b.outputs[i]![name]!.dims)
      max = Math.max(max, maxAbsDiff(value.data, b.outputs[i]![name]!.data))
    }
  })
  return max
}

/** The one output (the classifier's softmax) of the batch, as [N, 2] probabilities. */
const probs = (report: RunReport): number[] => Object.values(report.outputs[0]!)[0]!.data

interface PageLog {
  messages: { type: string; text: string }[]
  errors: string[]
}

// --- the tests -------------------------------------------------------------------

describe('edgeserve/onnx in Chromium: WebGPU and WASM', () => {
  let dir: string | undefined
  let server: FileServer | undefined
  let base = ''
  const browsers = new Set<Browser>()
  /** Paths the server had nothing for: a page asking for a file ORT needs shows up here. */
  let misses: string[] = []
  /** Node's own result for the same model and inputs (src/onnx/node.ts). */
  const nodeOutputs: number[][] = []

  beforeAll(async () => {
    requireChromium()
    dir = await mkdtemp(join(tmpdir(), 'edgeserve-webgpu-'))
    await bundlePage(PAGE_ENTRY, join(dir, 'app', 'main.js'))
    await writeFile(
      join(dir, 'index.html'),
      '<!doctype html>\n<meta charset="utf-8">\n<title>edgeserve/onnx</title>\n<script type="module" src="/app/main.js"></script>\n',
    )
    await writeFile(join(dir, 'favicon.ico'), '')
    await writeFile(join(dir, 'batch.f32'), INPUT.data)

    // Only these paths exist: the page, the bundle, ORT's files next to it, the model and the inputs.
    server = await serveFiles(
      new Map<string, string>([
        ['/', join(dir, 'index.html')],
        ['/favicon.ico', join(dir, 'favicon.ico')],
        ['/app/main.js', join(dir, 'app', 'main.js')],
        ['/model.onnx', MODEL],
        ['/inputs/batch.f32', join(dir, 'batch.f32')],
      ]),
    )
    base = server.base
    misses = server.misses

    // The reference: the same inputs through edgeserve/onnx on Node.
    const model = await loadModelNode(MODEL, { executionProviders: ['wasm'] })
    try {
      const out = await model.run({ [model.inputNames[0]!]: new NodeTensor('float32', INPUT.data, INPUT.dims) })
      nodeOutputs.push(Array.from(out[model.outputNames[0]!]!.data as Float32Array))
    } finally {
      await model.release()
    }
  })

  afterAll(async () => {
    // Each step on its own, so one failure does not leave the others behind.
    for (const browser of browsers) await browser.close().catch(() => undefined)
    await server?.close()
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  /** A fresh Chromium with exactly the documented flags + `extra`, and a page on the test's server. */
  async function openPage(extra: string[]): Promise<{ browser: Browser; page: Page; log: PageLog }> {
    const browser = await launchChromium(dir!, extra)
    browsers.add(browser)
    const page = await browser.newPage()
    const log: PageLog = { messages: [], errors: [] }
    page.on('console', (message: ConsoleMessage) => log.messages.push({ type: message.type(), text: message.text() }))
    page.on('pageerror', (error) => log.errors.push(error.message))
    const response = await page.goto(`${base}/`)
    expect(response?.status()).toBe(200)
    await page.waitForFunction('typeof window.onnxPage === "object"', undefined, { timeout: 10_000 })
    return { browser, page, log }
  }

  async function closeBrowser(browser: Browser) {
    browsers.delete(browser)
    await browser.close().catch(() => undefined)
  }

  // Arrow functions only: Playwright sends their source text to the page.
  const adapterOf = (page: Page) => page.evaluate(() => (window as unknown as PageWindow).onnxPage.adapter())
  const runOn = (page: Page, providers: 'auto' | Provider[]) =>
    page.evaluate(([model, providers, inputs]) => (window as unknown as PageWindow).onnxPage.run(model, providers, inputs), [
      `${base}/model.onnx`,
      providers,
      INPUTS,
    ] as const)

  /** Same classifier, same numbers: a run in the page against Node's run. */
  function expectMatchesNode(report: RunReport, tolerance: number): number {
    expect(report.outputs).toHaveLength(nodeOutputs.length)
    let max = 0
    report.outputs.forEach((outputs, i) => {
      const [only, ...more] = Object.values(outputs)
      expect(more).toEqual([])
      max = Math.max(max, maxAbsDiff(only!.data, nodeOutputs[i]!))
    })
    expect(max).toBeLessThan(tolerance)
    return max
  }

  /** The fixtures get the angles they were rendered at, confidently. */
  function expectFixtureAngles(report: RunReport) {
    const results = clsPostprocessBatch(probs(report), 4).slice(0, FIXTURES_USED.length)
    expect(results.map((r) => r.angle)).toEqual(FIXTURES_USED.map((m) => m.angle))
    for (const r of results) expect(r.confidence).toBeGreaterThan(PADDLE_CLS_THRESH)
  }

  it(
    `with ${WEBGPU_FLAGS.join(' ')}: 'auto' picks WebGPU, and its outputs match the WASM provider's within ${WEBGPU_TOLERANCE}`,
    async () => {
      const { browser, page, log } = await openPage(WEBGPU_FLAGS)
      try {
        const adapter = await adapterOf(page)
        expect(adapter, 'navigator.gpu.requestAdapter() under --enable-unsafe-webgpu').toMatchObject({ gpu: true, adapter: true })

        const auto = await runOn(page, 'auto')
        const wasm = await runOn(page, ['wasm'])
        expect(auto.provider).toBe('webgpu')
        expect(wasm.provider).toBe('wasm')
        expect(auto.outputs.map((o) => Object.values(o).map((v) => v.dims))).toEqual([[[4, 2]]])

        const diff = runDiff(auto, wasm)
        expect(diff).toBeLessThan(WEBGPU_TOLERANCE)
        const wasmVsNode = expectMatchesNode(wasm, 1e-5)
        expectFixtureAngles(auto)
        expectFixtureAngles(wasm)

        expect(misses).toEqual([])
        expect(log.errors).toEqual([])
        // ORT's own log goes to console.error: this also catches e.g. nodes it could not place on WebGPU.
        expect(log.messages.filter((m) => m.type === 'error')).toEqual([])
        // For the record (and the README): what ran, and how close it came.
        console.log(
          `webgpu.test: adapter ${JSON.stringify(adapter)}; max |webgpu - wasm| = ${diff.toExponential(3)}, ` +
            `max |browser wasm - node wasm| = ${wasmVsNode.toExponential(3)}; ` +
            `load/first run ms: webgpu ${auto.loadMs.toFixed(0)}/${auto.runMs.toFixed(0)}, wasm ${wasm.loadMs.toFixed(0)}/${wasm.runMs.toFixed(0)}`,
        )
      } finally {
        await closeBrowser(browser)
      }
    },
    // ~10 s on an idle 2-core machine, but SwiftShader compiles every WebGPU shader on
    // the CPU, so a busy machine (load average 10 on 2 cores) has taken 48 s: room for that.
    90_000,
  )

  it("without the flag: no adapter, 'auto' picks WASM; an explicit ['webgpu', 'wasm'] falls back to WASM and ['webgpu'] alone fails", async () => {
    const { browser, page, log } = await openPage([])
    try {
      expect(await adapterOf(page)).toEqual({ gpu: true, adapter: false })

      const auto = await runOn(page, 'auto')
      expect(auto.provider).toBe('wasm')
      expectMatchesNode(auto, 1e-5)
      expectFixtureAngles(auto)
      // 'auto' did not even try WebGPU, so nothing was said about falling back.
      expect(log.messages.filter((m) => m.text.startsWith('edgeserve:'))).toEqual([])

      const fallback = await runOn(page, ['webgpu', 'wasm'])
      expect(fallback.provider).toBe('wasm')
      expect(runDiff(fallback, auto)).toBeLessThan(1e-6)
      const said = log.messages.filter((m) => m.text.startsWith('edgeserve:'))
      expect(said).toHaveLength(1)
      expect(said[0]!.type).toBe('warning')
      expect(said[0]!.text).toMatch(/^edgeserve: could not create a webgpu session \(.+\); falling back to wasm$/)

      await expect(runOn(page, ['webgpu'])).rejects.toThrow(/webgpu/)

      expect(misses).toEqual([])
      expect(log.errors).toEqual([])
      // Only warnings: Chromium's "No available adapters." and the fallback notice above.
      expect(log.messages.filter((m) => m.type === 'error')).toEqual([])
    } finally {
      await closeBrowser(browser)
    }
  }, 30_000)
})
