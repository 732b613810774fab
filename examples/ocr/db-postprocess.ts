/**
 * PaddleOCR's DB post-processing: from the detector's text-probability map to
 * text boxes, with PaddleOCR's default constants.
 *
 *  1. threshold the map at 0.3;
 *  2. each 8-connected region of text pixels is a candidate (at most 1,000);
 *  3. its minimum-area rectangle, skipped if its short side is under 3 px;
 *  4. its score, the mean probability inside that rectangle, must reach 0.6;
 *  5. the rectangle is grown ("unclipped") by area * 1.5 / perimeter on every
 *     side, since DB is trained to predict a shrunk core of each text line;
 *  6. skipped if its short side is still under 5 px; scaled to the page.
 *
 * Growing a rectangle by d and taking the minimum-area rectangle of the
 * result (PaddleOCR offsets the polygon with pyclipper, then calls
 * minAreaRect) is the same as adding 2d to each side, which is what step 5 does.
 */
import { insideConvexQuad, minAreaRect, rectCorners, type Point, type Quad } from './geometry.js'

export interface DbOptions {
  /** Probability above which a pixel is text. */
  threshold: number
  /** Least mean probability inside a box. */
  boxThreshold: number
  /** How far a box grows: distance = area * unclipRatio / perimeter. */
  unclipRatio: number
  maxCandidates: number
}

export const DB_DEFAULTS: DbOptions = { threshold: 0.3, boxThreshold: 0.6, unclipRatio: 1.5, maxCandidates: 1000 }
const MIN_SIZE = 3

export interface DetectedBox {
  box: Quad
  score: number
}

/**
 * Boxes in the page's coordinates from a [h, w] probability map computed on
 * the page resized to w x h.
 */
export function dbPostprocess(
  probs: Float32Array,
  mapWidth: number,
  mapHeight: number,
  pageWidth: number,
  pageHeight: number,
  options: DbOptions = DB_DEFAULTS,
): DetectedBox[] {
  const regions = textRegions(probs, mapWidth, mapHeight, options.threshold, options.maxCandidates)
  const sx = pageWidth / mapWidth
  const sy = pageHeight / mapHeight
  const boxes: DetectedBox[] = []
  for (const points of regions) {
    const rect = minAreaRect(points)
    if (Math.min(rect.width, rect.height) < MIN_SIZE) continue
    const core = rectCorners(rect)
    const score = meanInside(probs, mapWidth, mapHeight, core)
    if (score < options.boxThreshold) continue
    const grow = (rect.width * rect.height * options.unclipRatio) / (2 * (rect.width + rect.height))
    const grown = { ...rect, width: rect.width + 2 * grow, height: rect.height + 2 * grow }
    if (Math.min(grown.width, grown.height) < MIN_SIZE + 2) continue
    const box = rectCorners(grown).map(([x, y]): Point => [clamp(Math.round(x * sx), 0, pageWidth), clamp(Math.round(y * sy), 0, pageHeight)]) as Quad
    boxes.push({ box, score })
  }
  return boxes
}

const clamp = (v: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, v))

/**
 * Each 8-connected region above `threshold`, reduced to the leftmost and
 * rightmost pixel of each of its rows: all the convex hull needs, and far
 * fewer points than the region has.
 */
function textRegions(probs: Float32Array, width: number, height: number, threshold: number, maxRegions: number): Point[][] {
  const labels = new Int32Array(width * height) // 0: unvisited or background; n > 0: region n
  const stack = new Int32Array(width * height)
  const regions: Point[][] = []
  for (let start = 0; start < labels.length; start++) {
    if (labels[start] !== 0 || !(probs[start]! > threshold)) continue
    if (regions.length >= maxRegions) break
    const label = regions.length + 1
    const rows = new Map<number, [min: number, max: number]>()
    let top = 0
    stack[top++] = start
    labels[start] = label
    while (top > 0) {
      const i = stack[--top]!
      const y = (i / width) | 0
      const x = i - y * width
      const row = rows.get(y)
      if (row === undefined) rows.set(y, [x, x])
      else if (x < row[0]) row[0] = x
      else if (x > row[1]) row[1] = x
      for (let dy = -1; dy <= 1; dy++) {
        const yy = y + dy
        if (yy < 0 || yy >= height) continue
        for (let dx = -1; dx <= 1; dx++) {
          const xx = x + dx
          if (xx < 0 || xx >= width) continue
          const j = yy * width + xx
          if (labels[j] === 0 && probs[j]! > threshold) {
            labels[j] = label
            stack[top++] = j
          }
        }
      }
    }
    const points: Point[] = []
    for (const [y, [min, max]] of rows) {
      points.push([min, y])
      if (max !== min) points.push([max, y])
    }
    regions.push(points)
  }
  return regions
}

/** Mean probability over the map's pixels inside `quad` (PaddleOCR's box_score_fast). */
function meanInside(probs: Float32Array, width: number, height: number, quad: Quad): number {
  const xs = quad.map((p) => p[0])
  const ys = quad.map((p) => p[1])
  const x0 = clamp(Math.floor(Math.min(...xs)), 0, width - 1)
  const x1 = clamp(Math.ceil(Math.max(...xs)), 0, width - 1)
  const y0 = clamp(Math.floor(Math.min(...ys)), 0, height - 1)
  const y1 = clamp(Math.ceil(Math.max(...ys)), 0, height - 1)
  let sum = 0
  let count = 0
  for (let y = y0; y <= y1; y++) {
    for (let x = x0; x <= x1; x++) {
      if (!insideConvexQuad(quad, x, y)) continue
      sum += probs[y * width + x]!
      count++
    }
  }
  return count === 0 ? 0 : sum / count
}
