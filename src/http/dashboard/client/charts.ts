/**
 * The two chart kinds, drawn as inline SVG. Colours come from CSS classes,
 * so one stylesheet serves light and dark themes; text goes in with
 * textContent only.
 */
import { svg } from './dom.js'
import { formatCount } from './format.js'

/** A colour of the theme, as a class name (styles.css defines each). */
export type Tone = 'tone-1' | 'tone-2' | 'tone-3' | 'tone-bar'

/** [time in ms, value]; null breaks the line. */
export type Point = [time: number, value: number | null]

export interface Series {
  tone: Tone
  /** Fill the area under the line. */
  area?: boolean
  points: Point[]
}

export interface LineChartOptions {
  /** The right edge of the time axis, in ms. */
  now: number
  windowS: number
  format: (value: number) => string
  /** The top of the value axis when every point is zero. */
  minMax: number
  /** What the chart says when it has no points. */
  empty: string
  /** Drawn last-first: the first series sits on top. */
  series: Series[]
}

export interface Bar {
  label: string
  value: number
  /** The hover text, if not "label: value unit". */
  title?: string
  /** Drawn in the accent tone (the size an adaptive queue allows now). */
  marked?: boolean
}

export interface BarChartOptions {
  bars: Bar[]
  /** What a bar counts, for its tooltip. */
  unit: string
  xTitle: string
  empty: string
}

interface Margins {
  left: number
  right: number
  top: number
  bottom: number
}

/** Size the drawing to the element's real width so 11 px text stays 11 px. */
function canvas(element: SVGElement, height: number): number {
  element.replaceChildren()
  const width = Math.max(260, Math.round(element.getBoundingClientRect().width) || 520)
  element.setAttribute('viewBox', '0 0 ' + width + ' ' + height)
  element.setAttribute('height', String(height))
  return width
}

/** A tick step of 1, 2 or 5 times a power of ten, giving about count ticks up to max. */
function tickStep(max: number, count: number): number {
  const raw = max / count
  const power = Math.pow(10, Math.floor(Math.log10(raw)))
  const scaled = raw / power
  return (scaled <= 1 ? 1 : scaled <= 2 ? 2 : scaled <= 5 ? 5 : 10) * power
}

/** Horizontal grid lines with their labels; counted by index so float steps do not drift. */
function gridLines(element: SVGElement, m: Margins, width: number, y: (v: number) => number, top: number, step: number, format: (v: number) => string): void {
  for (let i = 0; i * step <= top + step / 2; i++) {
    const v = i * step
    element.appendChild(svg('line', { x1: m.left, x2: width - m.right, y1: y(v), y2: y(v), class: i === 0 ? 'axis' : 'grid' }))
    element.appendChild(svg('text', { x: m.left - 8, y: y(v) + 4, class: 'tick', 'text-anchor': 'end' }, format(v)))
  }
}

function emptyNote(element: SVGElement, x: number, y: number, text: string): void {
  element.appendChild(svg('text', { x, y, class: 'empty-note', 'text-anchor': 'middle' }, text))
}

/**
 * A live line chart over the last windowS seconds. Idle intervals are null
 * points and show as gaps instead of invented values. Sets data-points to
 * the number of points drawn (for tests).
 */
export function drawLineChart(element: SVGElement, options: LineChartOptions): void {
  const height = 176
  const width = canvas(element, height)
  const m: Margins = { left: 52, right: 14, top: 10, bottom: 26 }
  const plotW = width - m.left - m.right
  const plotH = height - m.top - m.bottom
  const start = options.now - options.windowS * 1000
  const x = (t: number) => m.left + ((t - start) / (options.windowS * 1000)) * plotW

  let max = 0
  let points = 0
  for (const series of options.series) {
    for (const [t, v] of series.points) {
      if (v === null || t < start) continue
      max = Math.max(max, v)
      points++
    }
  }
  element.setAttribute('data-points', String(points))

  const step = tickStep(max > 0 ? max : options.minMax, 4)
  const top = Math.max(step, Math.ceil((max > 0 ? max : options.minMax) / step) * step)
  const y = (v: number) => m.top + plotH - (v / top) * plotH

  gridLines(element, m, width, y, top, step, options.format)
  const every = [2, 5, 10, 15, 30].find((s) => options.windowS / s <= 4) ?? 30
  for (let ago = options.windowS; ago >= 0; ago -= every) {
    const at = x(options.now - ago * 1000)
    element.appendChild(svg('line', { x1: at, x2: at, y1: m.top + plotH, y2: m.top + plotH + 4, class: 'axis' }))
    const anchor = ago === options.windowS ? 'start' : ago === 0 ? 'end' : 'middle'
    element.appendChild(svg('text', { x: at, y: height - 6, class: 'tick', 'text-anchor': anchor }, ago === 0 ? 'now' : '\u2212' + ago + ' s'))
  }

  if (points === 0) {
    emptyNote(element, m.left + plotW / 2, m.top + plotH / 2, options.empty)
    return
  }

  // Drawn last-first, so the first (primary) series sits on top where lines coincide.
  for (const series of [...options.series].reverse()) {
    // Split into runs of non-null points: each run is one path, gaps stay gaps.
    const runs: [number, number][][] = []
    let run: [number, number][] = []
    for (const [t, v] of series.points) {
      if (t < start) continue
      if (v === null) {
        if (run.length) runs.push(run)
        run = []
      } else run.push([x(t), y(v)])
    }
    if (run.length) runs.push(run)
    for (const r of runs) {
      const line = r.map(([px, py], i) => (i ? 'L' : 'M') + px.toFixed(1) + ' ' + py.toFixed(1)).join(' ')
      const first = r[0]!
      const last = r[r.length - 1]!
      if (series.area && r.length > 1) {
        const base = y(0).toFixed(1)
        const area = line + ' L' + last[0].toFixed(1) + ' ' + base + ' L' + first[0].toFixed(1) + ' ' + base + ' Z'
        element.appendChild(svg('path', { d: area, class: 'area ' + series.tone }))
      }
      element.appendChild(svg('path', { d: line, class: 'line ' + series.tone }))
    }
    // A dot on the newest point of each series.
    const newest = runs[runs.length - 1]?.at(-1)
    if (newest) element.appendChild(svg('circle', { cx: newest[0], cy: newest[1], r: 3, class: 'dot ' + series.tone }))
  }
}

/**
 * A bar chart of a histogram's buckets (per bucket, not cumulative), each
 * bar labelled with its count; bars carry data-count and data-bucket for
 * tests and a <title> for a hover tooltip.
 */
export function drawBarChart(element: SVGElement, options: BarChartOptions): void {
  const height = 214
  const width = canvas(element, height)
  const m: Margins = { left: 44, right: 10, top: 20, bottom: 40 }
  const plotW = width - m.left - m.right
  const plotH = height - m.top - m.bottom
  const bars = options.bars
  const max = bars.reduce((a, b) => Math.max(a, b.value), 0)
  const step = tickStep(Math.max(max, 4), 4)
  const top = Math.max(step, Math.ceil(max / step) * step)
  const y = (v: number) => m.top + plotH - (v / top) * plotH

  gridLines(element, m, width, y, top, step, formatCount)
  element.appendChild(svg('text', { x: m.left + plotW / 2, y: height - 4, class: 'axis-title', 'text-anchor': 'middle' }, options.xTitle))

  const slot = plotW / Math.max(bars.length, 1)
  const barW = Math.min(56, slot * 0.72)
  bars.forEach((bar, i) => {
    const cx = m.left + slot * (i + 0.5)
    const h = y(0) - y(bar.value)
    const rect = svg('rect', {
      x: cx - barW / 2,
      y: y(bar.value),
      width: barW,
      height: Math.max(h, bar.value > 0 ? 1 : 0),
      rx: 2,
      class: bar.marked ? 'bar marked' : 'bar',
      'data-count': bar.value,
      'data-bucket': bar.label,
    })
    rect.appendChild(svg('title', {}, bar.title ?? bar.label + ': ' + formatCount(bar.value) + ' ' + options.unit))
    element.appendChild(rect)
    if (bar.value > 0) {
      element.appendChild(svg('text', { x: cx, y: y(bar.value) - 5, class: 'bar-value', 'text-anchor': 'middle' }, formatCount(bar.value)))
    }
    element.appendChild(svg('text', { x: cx, y: y(0) + 15, class: 'tick', 'text-anchor': 'middle' }, bar.label))
  })
  if (max === 0) emptyNote(element, m.left + plotW / 2, m.top + plotH / 2, options.empty)
}
