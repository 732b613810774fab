/** The OCR pipeline's pure parts: DB post-processing, geometry, reading order, CTC decoding. */
import { describe, expect, it } from 'vitest'
import { ctcClasses, ctcGreedyDecode } from '../../../examples/ocr/ctc.js'
import { dbPostprocess } from '../../../examples/ocr/db-postprocess.js'
import { detectSize } from '../../../examples/ocr/detect-input.js'
import { minAreaRect, orderCorners, type Quad } from '../../../examples/ocr/geometry.js'
import { readingOrder } from '../../../examples/ocr/reading-order.js'
import { COARSE_REC_WIDTHS, recBucket } from '../../../examples/ocr/recognize-input.js'

/** A probability map with rectangles of probability `p`. */
function map(width: number, height: number, rects: [x0: number, y0: number, x1: number, y1: number, p: number][]): Float32Array {
  const probs = new Float32Array(width * height)
  for (const [x0, y0, x1, y1, p] of rects) for (let y = y0; y <= y1; y++) probs.fill(p, y * width + x0, y * width + x1 + 1)
  return probs
}

describe('DB post-processing', () => {
  it('finds each region, grows it by area * 1.5 / perimeter, and scales it to the page', () => {
    const probs = map(64, 32, [[10, 10, 49, 19, 0.9]]) // 39 x 9 between pixel centres
    const [found, ...rest] = dbPostprocess(probs, 64, 32, 128, 64)
    expect(rest).toEqual([])
    const grow = (39 * 9 * 1.5) / (2 * (39 + 9))
    const [tl, tr, br, bl] = found!.box
    expect(tl).toEqual([Math.round((10 - grow) * 2), Math.round((10 - grow) * 2)])
    expect(br).toEqual([Math.round((49 + grow) * 2), Math.round((19 + grow) * 2)])
    expect(tr[1]).toBe(tl[1])
    expect(bl[0]).toBe(tl[0])
    expect(found!.score).toBeCloseTo(0.9, 5)
  })

  it('drops regions under the box score or thinner than 3 px', () => {
    const probs = map(64, 64, [
      [2, 2, 30, 10, 0.5], // above the 0.3 threshold, under the 0.6 box score
      [2, 20, 40, 21, 0.9], // 1 px between pixel centres
      [2, 40, 30, 50, 0.9],
    ])
    const boxes = dbPostprocess(probs, 64, 64, 64, 64)
    expect(boxes).toHaveLength(1)
    expect(boxes[0]!.box[0][1]).toBeLessThan(40)
    expect(boxes[0]!.box[2][1]).toBeGreaterThan(50)
  })
})

describe('geometry', () => {
  it('the minimum-area rectangle of a tilted rectangle is that rectangle', () => {
    const angle = 0.3
    const corners = [
      [0, 0],
      [40, 0],
      [40, 10],
      [0, 10],
    ].map(([x, y]) => [x! * Math.cos(angle) - y! * Math.sin(angle), x! * Math.sin(angle) + y! * Math.cos(angle)] as [number, number])
    const rect = minAreaRect([...corners, [20 * Math.cos(angle) - 5 * Math.sin(angle), 20 * Math.sin(angle) + 5 * Math.cos(angle)]])
    expect(Math.max(rect.width, rect.height)).toBeCloseTo(40, 6)
    expect(Math.min(rect.width, rect.height)).toBeCloseTo(10, 6)
  })

  it('orders corners top-left, top-right, bottom-right, bottom-left', () => {
    expect(
      orderCorners([
        [10, 5],
        [0, 5],
        [10, 0],
        [0, 0],
      ]),
    ).toEqual([
      [0, 0],
      [10, 0],
      [10, 5],
      [0, 5],
    ])
  })
})

describe('reading order', () => {
  const box = (x: number, y: number, w: number, h: number): { box: Quad; id: string } => ({
    box: [
      [x, y],
      [x + w, y],
      [x + w, y + h],
      [x, y + h],
    ],
    id: `${x},${y}`,
  })

  it('groups boxes that share a row (a price beside its item) and reads rows top to bottom', () => {
    const rows = readingOrder([box(300, 52, 40, 20), box(10, 10, 100, 20), box(10, 50, 80, 20)], 400, 100)
    expect(rows.map((row) => row.map((b) => b.id))).toEqual([['10,10'], ['10,50', '300,52']])
  })

  it('reads an upside-down page from its own top-left', () => {
    const rows = readingOrder([box(10, 10, 100, 20), box(290, 70, 100, 20), box(10, 70, 100, 20)], 400, 100, true)
    expect(rows.map((row) => row.map((b) => b.id))).toEqual([['290,70', '10,70'], ['10,10']])
  })
})

describe('inputs and CTC', () => {
  it('sizes the detector input to multiples of 32 with the longest side at most 960', () => {
    expect(detectSize(1, 1)).toEqual({ width: 32, height: 32 })
    expect(detectSize(1920, 1080)).toEqual({ width: 960, height: 544 })
    expect(detectSize(480, 400)).toEqual({ width: 480, height: 416 })
  })

  it('puts a line in the smallest bucket that fits, the widest beyond: by default its own width, to 8 px', () => {
    expect([recBucket(150), recBucket(152), recBucket(321), recBucket(5000)]).toEqual([152, 152, 328, 1920])
    expect([recBucket(150, COARSE_REC_WIDTHS), recBucket(321, COARSE_REC_WIDTHS), recBucket(5000, COARSE_REC_WIDTHS)]).toEqual([160, 400, 1920])
  })

  it('greedy decoding drops repeats and blanks, and a blank separates a doubled letter', () => {
    const classes = ctcClasses('a\nb\n')
    expect(classes).toEqual(['', 'a', 'b', ' '])
    const steps = [1, 1, 0, 1, 2, 2, 0, 3].map((c) => [0, 1, 2, 3].map((k) => (k === c ? 0.9 : 0.1 / 3)))
    const decoded = ctcGreedyDecode(Float32Array.from(steps.flat()), 0, steps.length, classes)
    expect(decoded.text).toBe('aab ')
    expect(decoded.confidence).toBeCloseTo(0.9, 5)
  })
})
