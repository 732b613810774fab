/**
 * The OCR direction classifier's batched method takes lines (clsResize).
 * Through a handle it may be given anything: an item that is not a line
 * must fail alone, while the lines batched with it get their directions.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { TextDirectionClassifier } from '../../examples/ocr-direction/classifier.js'
import { decodeImage } from '../../examples/ocr-direction/image.js'
import { clsResize, type ClsLine } from '../../examples/ocr-direction/preprocess.js'

const line = (file: string) => clsResize(decodeImage(new Uint8Array(readFileSync(new URL(`../fixtures/ocr/${file}`, import.meta.url)))))
// At a fixed 32: the shipped adaptive size starts at one line a batch and climbs, and this test needs shared batches from the start.
const classifier = new TextDirectionClassifier({ adaptive: false })

describe('the OCR direction classifier, batched', () => {
  it('answers each line, and an item that is not a line fails alone', { timeout: 60_000 }, async () => {
    await classifier.checkHealth() // the model loaded, so the calls below queue behind each other's batches
    const upright = line('hello-world.png')
    const rotated = line('hello-world.rot180.png')
    const wrong: unknown[] = [{ ...upright, width: 193 }, { ...upright, data: upright.data.subarray(1) }, null, 'a line']
    // Forty calls at once: batches of several, so each wrong item shares its batch with lines.
    const items: unknown[] = Array.from({ length: 40 }, (_, i) => (i % 10 === 5 ? wrong[(i / 10) | 0] : i % 2 ? rotated : upright))
    const settled = await Promise.allSettled(items.map((item) => classifier.classify(item as ClsLine)))
    settled.forEach((outcome, i) => {
      if (wrong.includes(items[i])) {
        expect(outcome.status, `item ${i}`).toBe('rejected')
        expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(RangeError)
        expect(String((outcome as PromiseRejectedResult).reason)).toMatch(/clsNormalize: expected a line of 48 rows/)
      } else {
        expect(outcome.status, `item ${i}`).toBe('fulfilled')
        expect((outcome as PromiseFulfilledResult<{ angle: number }>).value.angle, `item ${i}`).toBe(i % 2 ? 180 : 0)
      }
    })
    expect(classifier.classify.stats().meanBatchSize).toBeGreaterThan(2)
  })
})
