/**
 * The OCR pipeline served on onnxruntime-node and on onnxruntime-web reads
 * every test page the same: the same text, line for line, the same boxes
 * and angles. The runtime is chosen per server by EDGESERVE_ONNX_RUNTIME, read
 * when each server's deployments load their models (on their first page).
 */
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { serve } from '../../src/runtime/node/index.js'
import { app } from '../../examples/ocr/app.js'
import type { OcrResult } from '../../examples/ocr/pipeline.js'
import type { PageEntry } from '../../scripts/models/ocr/pages.js'
import { modelsLoaded } from '../support/models-loaded.js'

const dir = new URL('../fixtures/ocr-pages/', import.meta.url)
const { pages } = JSON.parse(readFileSync(new URL('manifest.json', dir), 'utf8')) as { pages: PageEntry[] }

let log: ReturnType<typeof vi.spyOn>
beforeAll(() => {
  log = vi.spyOn(console, 'log').mockImplementation(() => undefined)
})
afterAll(() => {
  vi.restoreAllMocks()
  delete process.env.EDGESERVE_ONNX_RUNTIME
})

/** Every page read by a server of its own whose models run on `runtime`, and the runtimes its models loaded on. */
async function readAll(runtime: 'onnxruntime-node' | 'onnxruntime-web'): Promise<{ answers: OcrResult[]; runtimes: Set<string> }> {
  process.env.EDGESERVE_ONNX_RUNTIME = runtime
  const before = log.mock.calls.length
  const server = await serve(app, { port: 0, name: `ocr-${runtime}`, handleSignals: false, dashboard: false })
  try {
    const answers = await Promise.all(
      pages.map(async (page) => {
        const body = new Uint8Array(readFileSync(new URL(page.file, dir)))
        const type = page.file.endsWith('.jpg') ? 'image/jpeg' : 'image/png'
        const response = await fetch(`${server.url}/ocr`, { method: 'POST', body, headers: { 'content-type': type } })
        expect(response.status, page.file).toBe(200)
        return (await response.json()) as OcrResult
      }),
    )
    return { answers, runtimes: new Set(modelsLoaded(log.mock.calls.slice(before)).map((line) => line.runtime)) }
  } finally {
    await server.close()
  }
}

describe('the OCR pipeline on both runtimes', () => {
  it('reads every test page to the same text and lines on onnxruntime-node as on onnxruntime-web', { timeout: 180_000 }, async () => {
    const web = await readAll('onnxruntime-web')
    const native = await readAll('onnxruntime-node')
    expect(web.runtimes).toEqual(new Set(['onnxruntime-web']))
    expect(native.runtimes).toEqual(new Set(['onnxruntime-node']))
    for (const [i, page] of pages.entries()) {
      const [a, b] = [native.answers[i]!, web.answers[i]!]
      expect(a.text, page.file).toBe(b.text)
      expect(
        a.lines.map((line) => [line.text, line.angle, line.box]),
        page.file,
      ).toEqual(b.lines.map((line) => [line.text, line.angle, line.box]))
    }
    expect(native.answers.some((answer) => answer.text.length > 0)).toBe(true)
  })
})
