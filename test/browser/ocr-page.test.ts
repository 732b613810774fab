/**
 * The OCR upload page in real headless Chromium: pick a page, the pipeline
 * reads it over loopback, the page draws the boxes and shows the text, under
 * its strict Content Security Policy (any violation would be a console error).
 */
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CHROMIUM, requireChromium } from '../support/chromium.js'
import { serve, type RunningServer } from '../../src/runtime/node/index.js'
import { app } from '../../examples/ocr/app.js'
import type { OcrResult } from '../../examples/ocr/pipeline.js'

const RECEIPT = fileURLToPath(new URL('../fixtures/ocr-pages/receipt.png', import.meta.url))

let server: RunningServer | undefined
let browser: Browser | undefined
beforeAll(async () => {
  requireChromium()
  server = await serve(app, { port: 0, name: 'ocr-page', handleSignals: false })
  const { chromium } = await import('playwright-core')
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--disable-gpu'], timeout: 20_000 })
})
afterAll(async () => {
  await browser?.close().catch(() => undefined)
  await server?.close().catch(() => undefined)
})

describe('GET /ocr in Chromium', () => {
  it('reads an uploaded page, draws its boxes and shows its text; a broken file shows the error', { timeout: 60_000 }, async () => {
    const page = await browser!.newPage()
    const problems: string[] = []
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text())
    })
    page.on('pageerror', (error) => problems.push(error.message))
    const requests: string[] = []
    page.on('request', (request) => requests.push(`${request.method()} ${request.url().replace(server!.url, '')}`))
    const response = await page.goto(`${server!.url}/ocr`)
    expect(response!.headers()['content-security-policy']).toMatch(/default-src 'none'; script-src 'sha256-/)

    await page.setInputFiles('#file', RECEIPT)
    await page.waitForSelector('#page[data-lines]', { timeout: 30_000 })
    const direct = (await (
      await fetch(`${server!.url}/ocr`, { method: 'POST', body: readFileSync(RECEIPT), headers: { 'content-type': 'image/png' } })
    ).json()) as OcrResult
    expect(await page.getAttribute('#page', 'data-lines')).toBe(String(direct.lines.length))
    expect(await page.textContent('#text')).toBe(direct.text)
    expect(await page.textContent('#status')).toBe(`${direct.lines.length} lines`)
    expect(await page.evaluate('[document.getElementById("page").width, document.getElementById("page").height]')).toEqual([480, 400])
    // The boxes are drawn: some pixel on the first box's top edge is the stroke colour.
    const [x, y] = direct.lines[0]!.box[0]
    const stroked = await page.evaluate(`(() => {
      const data = document.getElementById('page').getContext('2d').getImageData(${x}, ${y} - 2, 40, 5).data
      for (let i = 0; i < data.length; i += 4) if (data[i] > 200 && data[i + 1] < 80) return true
      return false
    })()`)
    expect(stroked).toBe(true)

    const broken = join(mkdtempSync(join(tmpdir(), 'ocr-page-')), 'broken.png')
    writeFileSync(broken, readFileSync(RECEIPT).subarray(0, 2000))
    await page.setInputFiles('#file', broken)
    await page.waitForSelector('#status.error', { timeout: 30_000 })
    // The server's 422 message, shown instead of a hang or a blank page.
    expect(await page.textContent('#status')).toMatch(/invalid PNG/)
    // Chromium logs the expected 422 itself; anything else (a CSP violation, a script error) fails.
    expect(problems.filter((p) => !p.includes('the server responded with a status of 422'))).toEqual([])
    expect(problems).toHaveLength(1)
    // The page itself and its two posts: no script, stylesheet or icon fetched from anywhere.
    expect(requests).toEqual(['GET /ocr', 'POST /ocr', 'POST /ocr'])
  })
})
