/**
 * Reading order: rows top to bottom, boxes in a row left to right.
 *
 * PaddleOCR sorts by the top-left corner and swaps neighbours less than
 * 10 px apart vertically; here boxes whose vertical extents overlap by half
 * the shorter one form a row instead, so the rule holds at any text size
 * (a price at the right margin stays in its item's row).
 *
 * A page upside down is read in its own frame: when most of the text (by
 * width) is upside down, rows are ordered as they come with the page turned
 * around, so the first line of the page comes first.
 */
import type { Point, Quad } from './geometry.js'

export interface Placed {
  box: Quad
}

interface Extent {
  top: number
  bottom: number
  left: number
}

function extentOf(box: Quad, turned: boolean, pageWidth: number, pageHeight: number): Extent {
  const points: Point[] = turned ? box.map(([x, y]): Point => [pageWidth - x, pageHeight - y]) : box
  const ys = points.map((p) => p[1])
  return { top: Math.min(...ys), bottom: Math.max(...ys), left: Math.min(...points.map((p) => p[0])) }
}

/** The items grouped into rows in reading order. `turned`: the page is upside down. */
export function readingOrder<T extends Placed>(items: readonly T[], pageWidth: number, pageHeight: number, turned = false): T[][] {
  const placed = items.map((item) => ({ item, extent: extentOf(item.box, turned, pageWidth, pageHeight) }))
  placed.sort((a, b) => a.extent.top + a.extent.bottom - (b.extent.top + b.extent.bottom))
  const rows: { top: number; bottom: number; members: typeof placed }[] = []
  for (const entry of placed) {
    const row = rows.at(-1)
    if (row) {
      const overlap = Math.min(row.bottom, entry.extent.bottom) - Math.max(row.top, entry.extent.top)
      const shorter = Math.min(row.bottom - row.top, entry.extent.bottom - entry.extent.top)
      if (overlap > shorter / 2) {
        row.members.push(entry)
        row.top = Math.min(row.top, entry.extent.top)
        row.bottom = Math.max(row.bottom, entry.extent.bottom)
        continue
      }
    }
    rows.push({ top: entry.extent.top, bottom: entry.extent.bottom, members: [entry] })
  }
  return rows.map((row) => row.members.sort((a, b) => a.extent.left - b.extent.left).map((m) => m.item))
}
