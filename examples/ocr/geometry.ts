/**
 * The plane geometry of text boxes: convex hull, minimum-area rectangle and
 * the corner order PaddleOCR uses (top-left, top-right, bottom-right,
 * bottom-left), written for the handful of points one text region has.
 */

export type Point = [x: number, y: number]
/** Four corners: top-left, top-right, bottom-right, bottom-left. */
export type Quad = [Point, Point, Point, Point]

const cross = (o: Point, a: Point, b: Point): number => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

/** Convex hull by Andrew's monotone chain, counter-clockwise, without collinear points. */
export function convexHull(points: readonly Point[]): Point[] {
  const sorted = [...points].sort((a, b) => a[0] - b[0] || a[1] - b[1])
  if (sorted.length <= 2) return sorted
  const lower: Point[] = []
  for (const p of sorted) {
    while (lower.length >= 2 && cross(lower[lower.length - 2]!, lower[lower.length - 1]!, p) <= 0) lower.pop()
    lower.push(p)
  }
  const upper: Point[] = []
  for (let i = sorted.length - 1; i >= 0; i--) {
    const p = sorted[i]!
    while (upper.length >= 2 && cross(upper[upper.length - 2]!, upper[upper.length - 1]!, p) <= 0) upper.pop()
    upper.push(p)
  }
  lower.pop()
  upper.pop()
  return lower.concat(upper)
}

export interface RotatedRect {
  center: Point
  /** Side along `angle`. */
  width: number
  height: number
  /** Direction of the `width` side, in radians. */
  angle: number
}

/**
 * The smallest-area rectangle around the points (OpenCV's minAreaRect): one
 * of its sides lies on a hull edge, so each edge direction is tried.
 */
export function minAreaRect(points: readonly Point[]): RotatedRect {
  const hull = convexHull(points)
  if (hull.length === 0) return { center: [0, 0], width: 0, height: 0, angle: 0 }
  if (hull.length === 1) return { center: [hull[0]![0], hull[0]![1]], width: 0, height: 0, angle: 0 }
  let best: RotatedRect | undefined
  let bestArea = Infinity
  for (let i = 0; i < hull.length; i++) {
    const a = hull[i]!
    const b = hull[(i + 1) % hull.length]!
    const length = Math.hypot(b[0] - a[0], b[1] - a[1])
    if (length === 0) continue
    const ux = (b[0] - a[0]) / length
    const uy = (b[1] - a[1]) / length
    let minU = Infinity
    let maxU = -Infinity
    let minV = Infinity
    let maxV = -Infinity
    for (const p of hull) {
      const u = p[0] * ux + p[1] * uy
      const v = -p[0] * uy + p[1] * ux
      if (u < minU) minU = u
      if (u > maxU) maxU = u
      if (v < minV) minV = v
      if (v > maxV) maxV = v
    }
    const area = (maxU - minU) * (maxV - minV)
    if (area < bestArea) {
      bestArea = area
      const cu = (minU + maxU) / 2
      const cv = (minV + maxV) / 2
      best = { center: [cu * ux - cv * uy, cu * uy + cv * ux], width: maxU - minU, height: maxV - minV, angle: Math.atan2(uy, ux) }
    }
  }
  return best!
}

/** The rectangle's four corners in PaddleOCR's order (see `orderCorners`). */
export function rectCorners(rect: RotatedRect): Quad {
  const { center, width, height, angle } = rect
  const ux = Math.cos(angle)
  const uy = Math.sin(angle)
  const hw = width / 2
  const hh = height / 2
  const at = (su: number, sv: number): Point => [center[0] + su * hw * ux - sv * hh * uy, center[1] + su * hw * uy + sv * hh * ux]
  return orderCorners([at(-1, -1), at(1, -1), at(1, 1), at(-1, 1)])
}

/**
 * Corners as PaddleOCR's get_mini_boxes orders them: the two leftmost points
 * give top-left and bottom-left (the upper one is top), the two rightmost
 * give top-right and bottom-right.
 */
export function orderCorners(points: readonly Point[]): Quad {
  const byX = [...points].sort((a, b) => a[0] - b[0])
  const [l0, l1, r0, r1] = byX as [Point, Point, Point, Point]
  const [topLeft, bottomLeft] = l0[1] <= l1[1] ? [l0, l1] : [l1, l0]
  const [topRight, bottomRight] = r0[1] <= r1[1] ? [r0, r1] : [r1, r0]
  return [topLeft, topRight, bottomRight, bottomLeft]
}

const distance = (a: Point, b: Point): number => Math.hypot(a[0] - b[0], a[1] - b[1])

/** Width and height of a quad as PaddleOCR measures a crop: the longer of each pair of opposite sides. */
export function quadSize(quad: Quad): { width: number; height: number } {
  const [tl, tr, br, bl] = quad
  return { width: Math.max(distance(tl, tr), distance(bl, br)), height: Math.max(distance(tl, bl), distance(tr, br)) }
}

/** Whether `p` lies inside (or on) a convex quad given in either winding. */
export function insideConvexQuad(quad: Quad, x: number, y: number): boolean {
  let sign = 0
  for (let i = 0; i < 4; i++) {
    const c = cross(quad[i]!, quad[(i + 1) % 4]!, [x, y])
    if (c === 0) continue
    const s = c > 0 ? 1 : -1
    if (sign === 0) sign = s
    else if (s !== sign) return false
  }
  return true
}
