/**
 * The OCR pipeline in workerd, as `npm run dev` serves it: four Durable
 * Objects composed through handles, the two large models fetched from the
 * Worker's static assets on first use.
 */
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startWorker, type TestWorker } from '../support/workerd.js'
import type { OcrResult } from '../../examples/ocr/pipeline.js'
import type { PageEntry } from '../../scripts/models/ocr/pages.js'
import { characterErrorRate, withSpaces, withoutSpaces } from '../support/ocr-cer.js'

const dir = new URL('../fixtures/ocr-pages/', import.meta.url)
const { pages } = JSON.parse(readFileSync(new URL('manifest.json', dir), 'utf8')) as { pages: PageEntry[] }
const receipt = pages.find((page) => page.file === 'receipt.png')!
const bytes = new Uint8Array(readFileSync(new URL(receipt.file, dir)))

let worker: TestWorker | undefined
beforeAll(async () => {
  worker = await startWorker(new URL('../../wrangler.toml', import.meta.url))
})
afterAll(async () => {
  await worker?.dispose()
})

const post = (body: BodyInit) => fetch(`${worker!.url}/ocr`, { method: 'POST', body, headers: { 'content-type': 'image/png' } })

describe('OCR pipeline on workerd', () => {
  it('reads the receipt as on Node, and a truncated page gets a 422', { timeout: 120_000 }, async () => {
    const [good, truncated] = await Promise.all([post(bytes), post(bytes.slice(0, 3000))])
    expect(good.status, await good.clone().text()).toBe(200)
    const { text } = (await good.json()) as OcrResult
    expect(characterErrorRate(withoutSpaces(text), withoutSpaces(receipt.text)), text).toBeLessThanOrEqual(0.03)
    expect(characterErrorRate(withSpaces(text), withSpaces(receipt.text)), text).toBeLessThanOrEqual(0.1)
    expect(truncated.status).toBe(422)
    expect(await truncated.json()).toMatchObject({ error: { type: 'HTTPError', message: expect.stringMatching(/invalid PNG: the file is cut short/) } })
  })
})
