/**
 * A malformed item fails alone, by default, shared by the Node
 * and the workerd test files: a burst of good house-price requests and one
 * whose features are too few, against test/support/malformed-item-app.ts.
 * Every good request answers 200 with the prediction a direct session.run
 * gives; the malformed one a 422 JSON error naming the shape.
 */
import { readFileSync } from 'node:fs'
import * as ort from 'onnxruntime-web'
import { beforeAll, describe, expect, it } from 'vitest'
import type { MalformedItemAnswer } from './malformed-item-app.js'

const MODEL = new Uint8Array(readFileSync(new URL('../../examples/house-price/model/house-price.onnx', import.meta.url)))

/** 19 plausible California block groups (the model's 8 features), made up deterministically. */
const HOUSES = Array.from({ length: 19 }, (_, i) => [
  1 + (i % 9),
  5 + i * 2,
  4 + (i % 4),
  1 + (i % 3) * 0.05,
  300 + i * 80,
  2 + (i % 5) * 0.3,
  33 + (i % 8),
  -122 + (i % 7),
])
const BAD_AT = 9

export function describeMalformedItem(runtime: string, baseUrl: () => string): void {
  let expected: number[] = []

  beforeAll(async () => {
    ort.env.wasm.numThreads = 1
    const session = await ort.InferenceSession.create(MODEL, { executionProviders: ['wasm'] })
    const direct = await session.run({ features: new ort.Tensor('float32', Float32Array.from(HOUSES.flat()), [HOUSES.length, 8]) })
    expected = Array.from(direct.price!.data as Float32Array)
  })

  for (const kind of ['item', 'requests'] as const) {
    const how = kind === 'item' ? 'batch() of feature rows' : 'deployment batching of requests'
    describe(`a burst with one malformed request on ${runtime} (${how})`, () => {
      it('answers every good request 200 with its prediction, and the malformed one 422 alone', async () => {
        const bodies = [...HOUSES.slice(0, BAD_AT), [1, 2], ...HOUSES.slice(BAD_AT)].map((features) => JSON.stringify({ features }))
        const responses = await Promise.all(
          bodies.map((body) => fetch(`${baseUrl()}/malformed/${kind}/predict`, { method: 'POST', body, headers: { 'content-type': 'application/json' } })),
        )
        const answers = await Promise.all(responses.map(async (response) => [response.status, await response.json()] as const))
        const [badStatus, badBody] = answers[BAD_AT]!
        expect([badStatus, badBody]).toEqual([422, { error: { type: 'HTTPError', message: 'item has 2 values, but shape [8] needs 8' } }])
        const good = answers.filter((_, i) => i !== BAD_AT)
        good.forEach(([status, body], i) => {
          expect(status, `request ${i}: ${JSON.stringify(body)}`).toBe(200)
          expect((body as MalformedItemAnswer).prediction).toBeCloseTo(expected[i]!, 5)
        })
        // The malformed request shared a batch with good ones, which ran again without it: the case this is about.
        const runs = good.map(([, body]) => (body as MalformedItemAnswer).runs).reduce((a, b) => (b.length > a.length ? b : a))
        const refused = runs.findIndex((run) => run.refused)
        expect(runs[refused]?.size, JSON.stringify(runs)).toBeGreaterThan(1)
        expect(runs[refused + 1], JSON.stringify(runs)).toEqual({ size: runs[refused]!.size - 1, refused: false })
      })

      it('answers two bodies that are not JSON 400 each, alone, and every good request of their burst 200', async () => {
        const broken = new Map([
          [4, '{"features": [1, 2'],
          [12, 'features=1,2'],
        ])
        const bodies = HOUSES.map((features, i) => broken.get(i) ?? JSON.stringify({ features }))
        const responses = await Promise.all(
          bodies.map((body) => fetch(`${baseUrl()}/malformed/${kind}/predict`, { method: 'POST', body, headers: { 'content-type': 'application/json' } })),
        )
        const answers = await Promise.all(responses.map(async (response) => [response.status, await response.json()] as const))
        answers.forEach(([status, body], i) => {
          if (broken.has(i)) {
            expect([status, body], `request ${i}`).toEqual([400, { error: { type: 'HTTPError', message: 'the request body is not valid JSON' } }])
          } else {
            expect(status, `request ${i}: ${JSON.stringify(body)}`).toBe(200)
            expect((body as MalformedItemAnswer).prediction).toBeCloseTo(expected[i]!, 5)
          }
        })
      })
    })
  }
}
