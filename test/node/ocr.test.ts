/**
 * The OCR pipeline on Node over real HTTP: three deployments (detector,
 * direction classifier, recognizer) behind `POST /ocr`, real PP-OCRv4 models.
 * Pages come from scripts/models/ocr/generate-pages.ts.
 */
import { readFileSync } from 'node:fs'
import { encode as encodePng } from 'fast-png'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { serve, type RunningServer } from '../../src/runtime/node/index.js'
import { Hono } from 'hono'
import { currentContext, deployment, ingress } from '../../src/index.js'
import { app } from '../../examples/ocr/app.js'
import { OcrPipeline, ocrPipeline, type OcrResult } from '../../examples/ocr/pipeline.js'
import { TextDetector, type DetectionInput } from '../../examples/ocr/detector.js'
import type { DetectedBox } from '../../examples/ocr/db-postprocess.js'
import { textRecognizer, type TextRecognizer } from '../../examples/ocr/recognizer.js'
import { resizeForRecognition } from '../../examples/ocr/recognize-input.js'
import type { DecodedLine } from '../../examples/ocr/ctc.js'
import { renderTextLine } from '../../scripts/models/ocr/render-text.js'
import { Replica } from '../../src/deployment/replica.js'
import { ocrDirection } from '../../examples/ocr-direction/classifier.js'
import { buildPageFixtures, type PageEntry } from '../../scripts/models/ocr/pages.js'
import { characterErrorRate, withSpaces, withoutSpaces } from '../support/ocr-cer.js'

const dir = new URL('../fixtures/ocr-pages/', import.meta.url)
const { pages } = JSON.parse(readFileSync(new URL('manifest.json', dir), 'utf8')) as { pages: PageEntry[] }
const bytesOf = (file: string) => new Uint8Array(readFileSync(new URL(file, dir)))
const typeOf = (file: string) => (file.endsWith('.jpg') ? 'image/jpeg' : 'image/png')

/**
 * The shipped detector, but each page's boxes come back only once the request that sent the page is past
 * its deadline (read from the call's context, as a replica runs a handle call in its request's scope).
 * It waits synchronously, as a long model run holds the event loop, so the deadline's timer has not fired
 * yet when the boxes are handed back.
 */
class LateTextDetector extends TextDetector {
  /** The shipped batched detection, kept as a property so that the replica's metrics count its batches. */
  readonly detectNow = (this as TextDetector).detect // the parent's, set before this class's fields

  override readonly detect = async (input: DetectionInput): Promise<DetectedBox[]> => {
    const deadline = currentContext()?.deadline
    if (deadline === undefined) throw new Error('LateTextDetector must be called inside a request that has a deadline')
    const boxes = await this.detectNow(input)
    const late = deadline + 1 - Date.now()
    if (late > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, late)
    return boxes
  }
}
const lateDetector = deployment(LateTextDetector)

let server: RunningServer
beforeAll(async () => {
  server = await serve(app, { port: 0, name: 'ocr-node', handleSignals: false })
})
afterAll(async () => {
  await server.close()
})

const post = (body: BodyInit, type = 'image/png') => fetch(`${server.url}/ocr`, { method: 'POST', body, headers: { 'content-type': type } })
const grayPng = (width: number, height: number, value = 235) =>
  new Uint8Array(encodePng({ width, height, data: new Uint8Array(width * height).fill(value), channels: 1, depth: 8 }))

describe('OCR pipeline on Node', () => {
  it('the committed pages are what the script renders', () => {
    const { files } = buildPageFixtures()
    for (const [file, bytes] of files) expect(Buffer.compare(Buffer.from(bytes), Buffer.from(bytesOf(file))), file).toBe(0)
  })

  it('reads every page, served together, within 3% CER without spaces and 10% with them', { timeout: 120_000 }, async () => {
    const answers = await Promise.all(
      pages.map(async (page) => {
        const response = await post(bytesOf(page.file), typeOf(page.file))
        expect(response.status, page.file).toBe(200)
        return (await response.json()) as OcrResult
      }),
    )
    for (const [i, page] of pages.entries()) {
      const { text, lines } = answers[i]!
      expect(characterErrorRate(withoutSpaces(text), withoutSpaces(page.text)), `${page.file}: ${JSON.stringify(text)}`).toBeLessThanOrEqual(0.03)
      expect(characterErrorRate(withSpaces(text), withSpaces(page.text)), `${page.file}: ${JSON.stringify(text)}`).toBeLessThanOrEqual(0.1)
      for (const line of lines) {
        expect(line.box).toHaveLength(4)
        expect(line.confidence).toBeGreaterThanOrEqual(0.5)
        for (const [x, y] of line.box) {
          expect(x).toBeGreaterThanOrEqual(0)
          expect(x).toBeLessThanOrEqual(page.width)
          expect(y).toBeGreaterThanOrEqual(0)
          expect(y).toBeLessThanOrEqual(page.height)
        }
      }
      // An upside-down page reads first line first, and says it was turned.
      expect(
        lines.every((line) => line.angle === (page.file.includes('rot180') ? 180 : 0)),
        page.file,
      ).toBe(true)
    }
    // Receipt rows: each price is in its item's row, after it.
    const receipt = answers[pages.findIndex((p) => p.file === 'receipt.png')]!
    expect(receipt.text.split('\n').slice(1, 3)).toEqual(['Coffee 3.50', 'Bagel with cream 4.25'])
  })

  it('answers out-of-range pages clearly: no text, 1x1, 20 megapixels, truncated, not an image', { timeout: 60_000 }, async () => {
    const blank = await post(grayPng(400, 300))
    expect(blank.status).toBe(200)
    expect(await blank.json()).toEqual({ text: '', lines: [] })
    const tiny = await post(grayPng(1, 1))
    expect(tiny.status).toBe(200)
    expect(await tiny.json()).toEqual({ text: '', lines: [] })
    const receipt = bytesOf('receipt.png')
    const cases: [BodyInit, string, number, RegExp][] = [
      [grayPng(5000, 4000), 'image/png', 413, /too large: 5000x4000/],
      [receipt.slice(0, receipt.length / 2), 'image/png', 422, /invalid PNG: the file is cut short/],
      [bytesOf('letter.noisy.jpg').slice(0, 5000), 'image/jpeg', 422, /invalid JPEG: the file is cut short/],
      ['not an image', 'image/png', 422, /unsupported image format/],
      [new Uint8Array(0), 'image/png', 400, /empty/],
      [receipt, 'text/plain', 415, /expected a PNG or JPEG/],
    ]
    // A good page in flight with the bad ones is still read.
    const good = post(receipt)
    const answers = await Promise.all(cases.map(([body, type]) => post(body, type)))
    for (const [i, response] of answers.entries()) {
      expect(response.status, `case ${i}`).toBe(cases[i]![2])
      const body = (await response.json()) as { error: { type: string; message: string } }
      expect(body.error.type).toBe('HTTPError')
      expect(body.error.message).toMatch(cases[i]![3])
    }
    expect(((await (await good).json()) as OcrResult).text).toContain('TOTAL 14.53')
  })

  it('a page past its request timeout gets 504, and its lines never reach the classifier or the recognizer', { timeout: 60_000 }, async () => {
    // Two pipelines: the shipped one, and one whose detector finds the page's boxes but hands them back only
    // once the request is past its deadline, holding the event loop as a long model run does, so the
    // deadline's timer has not yet fired when the boxes come back. The order is made certain, not left to the
    // clock: the page reaches the detector well inside its 1 s, and its boxes come back after it.
    const hurried = deployment(OcrPipeline, { name: 'HurriedOcrPipeline', requestTimeoutS: 1 }).bind(lateDetector, ocrDirection, textRecognizer)
    const both = new Hono().post('/hurried', ingress(hurried)).post('/ocr', ingress(ocrPipeline))
    const other = await serve(both, { port: 0, name: 'ocr-hurried', handleSignals: false, dashboard: false })
    const itemsSeenBy = async (deployment: string): Promise<number> => {
      const metrics = await (await fetch(`${other.url}/-/metrics`)).text()
      const line = metrics.split('\n').find((l) => l.startsWith(`edgeserve_batch_size_sum{deployment="${deployment}"`))
      return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1))
    }
    const send = (path: string) => fetch(`${other.url}${path}`, { method: 'POST', body: bytesOf('receipt.png'), headers: { 'content-type': 'image/png' } })
    try {
      const timedOut = await send('/hurried')
      expect(timedOut.status).toBe(504)
      expect(await itemsSeenBy('LateTextDetector')).toBe(1) // the page was detected, its boxes came too late
      // The same page again, with time to finish. Had the first page's boxes been handed on after its
      // deadline, its lines would have been queued for the classifier and the recognizer before these.
      const read = await send('/ocr')
      expect(read.status).toBe(200)
      const { lines } = (await read.json()) as OcrResult
      expect(lines).toHaveLength(14) // every box of the receipt is read confidently: lines = boxes
      expect(await itemsSeenBy('TextDetector')).toBe(1)
      expect(await itemsSeenBy('TextDirectionClassifier')).toBe(14)
      expect(await itemsSeenBy('TextRecognizer')).toBe(14)
    } finally {
      await other.close()
    }
  })
})

describe('the OCR recognizer: a line reads the same whatever it is batched with', () => {
  it('gives each line the text it has alone, and its confidence within float rounding, when lines of other widths are in flight', async () => {
    const recognizer = new Replica(textRecognizer.bind({ maxBatchSize: 8, adaptive: false }), 0, {}).instance() as TextRecognizer
    // Lines of many widths, each twice: the same width may share a run, a wider one must not pad it.
    const texts = [
      'The clocks were striking thirteen',
      'Hello, world:',
      'TOTAL 14.53',
      'Sales grew by 12 percent',
      'Bagel with cream',
      'Tax 1.08',
      'Invoice No 2024-0187',
      'a poster was tacked up',
    ]
    const lines = texts.flatMap((text) => [2, 3].map((scale) => resizeForRecognition(renderTextLine(text, { scale, margin: 4 }))))
    const alone: DecodedLine[] = []
    for (const line of lines) alone.push(await recognizer.recognize(line))
    const order = [...lines.keys(), ...lines.keys()].sort((a, b) => ((a * 7) % lines.length) - ((b * 7) % lines.length))
    const together = await Promise.all(order.map((i) => recognizer.recognize(lines[i]!)))
    // Padded to the widest line of a 1.25x bucket, as before, 49 of 96 such answers moved by more than 1e-6 (up to 0.036).
    const moved = together.flatMap((answer, k) => {
      const own = alone[order[k]!]!
      return answer.text !== own.text || Math.abs(answer.confidence - own.confidence) > 1e-6 ? [{ own, answer }] : []
    })
    expect(moved).toEqual([])
    expect((recognizer.recognize as unknown as { stats(): { meanBatchSize: number } }).stats().meanBatchSize).toBeGreaterThan(1)
  })
})
