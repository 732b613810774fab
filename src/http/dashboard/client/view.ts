/**
 * The deployment cards. Each card is built once and then updated in place,
 * so polling does not flicker or lose scroll position.
 */
import { drawBarChart, drawLineChart, type Point, type Tone } from './charts.js'
import { el, svg, syncChildren } from './dom.js'
import { axisRate, axisSeconds, DASH, formatCount, formatOption, formatPercent, formatRate, formatSeconds, trim, type Figure } from './format.js'
import type { AdaptiveModel, DeploymentModel, Histogram, MethodModel, Window } from './stats.js'
import type { Options } from './wire.js'

/** A deployment's last minute, one series per line on its charts. */
export interface History {
  requests: Point[]
  batches: Point[]
  p50: Point[]
  p95: Point[]
  p99: Point[]
  /** Replicas taking requests: autoscaling moves it. */
  replicas: Point[]
}

const QUANTILES = ['p50', 'p95', 'p99'] as const

/** A number with its raw value in data-value (for tests) and a note on the window it covers. */
interface Reading {
  value: HTMLElement
  note: HTMLElement
}

interface Stat extends Reading {
  node: HTMLElement
}

interface Kpi extends Stat {
  unit: HTMLElement
}

interface ChartFigure {
  figure: HTMLElement
  chart: SVGElement
  /** The legend's figures, by data-testid. */
  legend: Map<string, HTMLElement>
}

interface MethodView {
  root: HTMLElement
  chart: ChartFigure
  /** With `adaptive`: items/s by batch size as measured, the size allowed now marked; hidden without it. */
  cost: ChartFigure
  stats: Record<'mean' | 'fill' | 'rate' | 'queue' | 'inflight' | 'total', Stat>
  options: HTMLElement
}

export interface Card {
  root: HTMLElement
  kpis: Record<'requests' | 'batches' | 'p50' | 'p95' | 'p99' | 'failed' | 'objectCalls' | 'itemsPerObjectCall', Kpi>
  throughput: ChartFigure
  latency: ChartFigure
  replicaChart: ChartFigure
  routes: HTMLElement
  replicas: HTMLElement
  total: HTMLElement
  methods: HTMLElement
  methodsEmpty: HTMLElement
  options: HTMLElement
  idleNote: HTMLElement
  methodViews: Map<string, MethodView>
}

/** A figure with a title, a legend of [tone, label, data-testid] keys and an SVG for one chart. */
function chartFigure(title: string, testid: string, keys: [Tone, string, string][]): ChartFigure {
  const chart = svg('svg', { class: 'chart', 'data-testid': testid, role: 'img', 'aria-label': title })
  const legend = new Map<string, HTMLElement>()
  const items = keys.map(([tone, label, id]) => {
    const figure = el('b', { 'data-testid': id }, [DASH])
    legend.set(id, figure)
    return el('span', { class: 'key' }, [el('i', { class: 'swatch ' + tone }), label, figure])
  })
  const caption = el('figcaption', {}, [el('h3', {}, [title]), el('div', { class: 'legend' }, items)])
  return { figure: el('figure', { class: 'panel' }, [caption, chart]), chart, legend }
}

function setLegend(chart: ChartFigure, id: string, text: string): void {
  const figure = chart.legend.get(id)
  if (figure) figure.textContent = text
}

/** A headline number: label, value with unit, and a note on the window it covers. */
function kpi(label: string, testid: string): Kpi {
  const value = el('span', { class: 'value', 'data-testid': testid, 'data-value': '' }, [DASH])
  const unit = el('span', { class: 'unit' })
  const note = el('span', { class: 'note' })
  const node = el('div', { class: 'kpi' }, [el('span', { class: 'label' }, [label]), el('span', { class: 'figure' }, [value, unit]), note])
  return { node, value, unit, note }
}

/** One of a batched method's numbers: a term and its value with a note. */
function stat(label: string, testid: string): Stat {
  const value = el('span', { class: 'value', 'data-testid': testid, 'data-value': '' }, [DASH])
  const note = el('small')
  return { node: el('div', { class: 'stat' }, [el('dt', {}, [label]), el('dd', {}, [value, note])]), value, note }
}

function setReading(reading: Reading, raw: number | null | undefined, text: string, note = ''): void {
  reading.value.textContent = text
  reading.value.setAttribute('data-value', raw === null || raw === undefined ? '' : String(raw))
  reading.note.textContent = note
}

function setKpi(item: Kpi, raw: number | null | undefined, [text, unit]: Figure, note = ''): void {
  setReading(item, raw, text, note)
  item.unit.textContent = unit
}

const isOptions = (value: unknown): value is Options => typeof value === 'object' && value !== null && !Array.isArray(value)

/** Nested options as dotted keys: { batching: { maxBatchSize: 4 } } -> batching.maxBatchSize. */
function flatten(value: Options, prefix: string): [string, unknown][] {
  const out: [string, unknown][] = []
  for (const [key, item] of Object.entries(value)) {
    if (isOptions(item)) out.push(...flatten(item, prefix + key + '.'))
    else out.push([prefix + key, item])
  }
  return out
}

function describeOption(key: string, value: unknown): string {
  // Deployment-level maxQueuedRequests uses -1 for "no limit" (batch options already say it in words).
  if (key === 'maxQueuedRequests' && value === -1) return 'unbounded'
  if (/S$/.test(key) && typeof value === 'number') return value + ' s'
  return formatOption(value)
}

/** A definition list of options; rebuilt only when the options change. */
function renderOptions(list: HTMLElement, options: Options, skip: string[]): void {
  const signature = JSON.stringify(options)
  if (list.getAttribute('data-signature') === signature) return
  list.setAttribute('data-signature', signature)
  const rows = flatten(options, '')
    .filter(([key]) => !skip.includes(key))
    .map(([key, value]) =>
      el('div', { class: 'option', 'data-testid': 'option', 'data-option': key }, [el('dt', {}, [key]), el('dd', {}, [describeOption(key, value)])]),
    )
  list.replaceChildren(...(rows.length ? rows : [el('div', { class: 'muted' }, ['none reported'])]))
}

export function createCard(name: string): Card {
  const kpis = {
    requests: kpi('Requests / s', 'requests-rate'),
    batches: kpi('Batches / s', 'batches-rate'),
    p50: kpi('p50 latency', 'latency-p50'),
    p95: kpi('p95 latency', 'latency-p95'),
    p99: kpi('p99 latency', 'latency-p99'),
    failed: kpi('Failed', 'failed-share'),
    // Workers only, and last: hidden where there are no object calls, a Node card keeps its six in their places.
    // Short labels, so that eight fit one row; the tooltip says what they count.
    objectCalls: kpi('Object calls / s', 'object-calls-rate'),
    itemsPerObjectCall: kpi('Items per call', 'object-call-items'),
  }
  kpis.objectCalls.node.title = "Calls into the replicas' Durable Objects. A Worker isolate gathers its concurrent requests to a replica into one."
  kpis.itemsPerObjectCall.node.title = 'Requests and handle calls each call into a Durable Object carried, on average.'
  const throughput = chartFigure('Throughput', 'throughput-chart', [
    ['tone-1', 'requests/s', 'legend-requests'],
    ['tone-2', 'batches/s', 'legend-batches'],
  ])
  const latency = chartFigure('Latency', 'latency-chart', [
    ['tone-1', 'p50', 'legend-p50'],
    ['tone-2', 'p95', 'legend-p95'],
    ['tone-3', 'p99', 'legend-p99'],
  ])
  const replicaChart = chartFigure('Replicas', 'replicas-chart', [['tone-1', 'replicas', 'legend-replicas']])
  const routes = el('div', { class: 'routes' })
  const replicas = el('span', { class: 'pill', 'data-testid': 'replicas', 'data-value': '' })
  const total = el('span', { class: 'pill', 'data-testid': 'requests-total', 'data-value': '' })
  const methods = el('div', { class: 'methods' })
  const methodsEmpty = el('p', { class: 'muted methods-empty' }, ['No batched methods reported yet: a replica lists them once it has started.'])
  const options = el('dl', { class: 'options inline' })
  const idleNote = el('p', { class: 'idle-note', 'data-testid': 'idle-note' })
  const root = el('section', { class: 'card', 'data-testid': 'deployment', 'data-deployment': name, 'data-state': 'idle' }, [
    el('header', { class: 'card-head' }, [el('div', { class: 'title' }, [el('h2', {}, [name]), replicas, total]), routes]),
    idleNote,
    el(
      'div',
      { class: 'kpis' },
      Object.values(kpis).map((k) => k.node),
    ),
    el('div', { class: 'charts' }, [throughput.figure, latency.figure, replicaChart.figure]),
    methods,
    el('footer', { class: 'card-foot' }, [el('span', { class: 'eyebrow' }, ['Deployment options']), options]),
  ])
  return { root, kpis, throughput, latency, replicaChart, routes, replicas, total, methods, methodsEmpty, options, idleNote, methodViews: new Map() }
}

function createMethod(name: string): MethodView {
  const chart = chartFigure('Batch size', 'batch-size-chart', [['tone-bar', 'batches', 'batch-size-total']])
  const stats = {
    mean: stat('Mean batch size', 'batch-size-mean'),
    fill: stat('Mean fill', 'batch-fill'),
    rate: stat('Batches / s', 'method-batches-rate'),
    queue: stat('Queue length', 'queue-length'),
    inflight: stat('Batches in flight', 'in-flight'),
    total: stat('Batches total', 'batches-total'),
  }
  const options = el('dl', { class: 'options' })
  const cost = chartFigure('Measured cost (adaptive)', 'cost-curve-chart', [
    ['tone-2', 'batch size allowed now', 'batch-size-limit'],
    ['tone-bar', 'sizes measured', 'cost-curve-sizes'],
  ])
  cost.figure.classList.add('cost')
  cost.figure.hidden = true
  const root = el('article', { class: 'method', 'data-testid': 'method', 'data-method': name }, [
    el('header', { class: 'method-head' }, [el('span', { class: 'eyebrow' }, ['Batched method']), el('code', {}, [name])]),
    el('div', { class: 'method-body' }, [
      chart.figure,
      el('div', { class: 'panel' }, [
        el('h3', {}, ['Batches']),
        el(
          'dl',
          { class: 'stats' },
          Object.values(stats).map((s) => s.node),
        ),
      ]),
      el('div', { class: 'panel' }, [el('h3', {}, ['Options in force']), options]),
      cost.figure,
    ]),
  ])
  return { root, chart, cost, stats, options }
}

/** Which observations a number covers: the last poll interval, or all of them when that was idle. */
function windowNote(window: Window, seconds: number): string {
  if (window === 'cumulative') return 'since start'
  return 'last ' + (seconds > 0 && seconds < 10 ? Number(seconds.toFixed(1)) : Math.round(seconds)) + ' s'
}

/** Redraw one card from the latest model; `seconds` is the poll interval the rates cover. */
export function updateCard(card: Card, d: DeploymentModel, history: History, now: number, windowS: number, seconds: number): void {
  // A deployment that has seen nothing gets one line instead of a wall of empty charts; set before
  // drawing, since hidden charts have no width to size to.
  const idle = !d.requestsTotal && !d.methods.some((m) => m.sizes && m.sizes.count > 0)
  card.root.setAttribute('data-state', idle ? 'idle' : 'active')
  card.idleNote.textContent =
    'No traffic yet. ' +
    (d.routes.length
      ? 'Requests to ' + d.routes.map((r) => r.method + ' ' + r.path).join(' or ') + ' show up here within a second.'
      : 'Calls through a handle show up here within a second.')
  card.replicas.textContent = d.replicas === null ? 'not started' : d.replicas + (d.replicas === 1 ? ' replica' : ' replicas')
  card.replicas.setAttribute('data-value', d.replicas === null ? '' : String(d.replicas))
  setLegend(card.replicaChart, 'legend-replicas', formatCount(d.replicas))
  card.total.textContent = formatCount(d.requestsTotal ?? 0) + ' requests'
  card.total.setAttribute('data-value', String(d.requestsTotal ?? 0))
  card.routes.replaceChildren(
    ...(d.routes.length
      ? d.routes.map((r) => el('code', { class: 'route' }, [el('b', {}, [r.method]), ' ' + r.path]))
      : [el('span', { class: 'muted' }, ['handles only, no HTTP route'])]),
  )

  setKpi(card.kpis.requests, d.requestsRate, formatRate(d.requestsRate), d.requestsRate === null ? 'waiting for a 2nd poll' : '')
  setKpi(card.kpis.batches, d.batchesRate, formatRate(d.batchesRate))
  const note = d.latency ? windowNote(d.latency.window, seconds) : 'no traffic yet'
  for (const q of QUANTILES) {
    const value = d.latency ? d.latency[q] : null
    setKpi(card.kpis[q], value, formatSeconds(value), note)
    card.kpis[q].value.setAttribute('data-window', d.latency ? d.latency.window : '')
    setLegend(card.latency, 'legend-' + q, formatSeconds(value).join(' '))
  }
  setKpi(card.kpis.failed, d.failedShare, formatPercent(d.failedShare), 'status \u2265 400')
  // What a Worker isolate's gathering did: many items per call is what makes a hop into an object pay.
  // Nothing to say where no replica is reached by an object call (Node), so no dash either.
  card.kpis.objectCalls.node.hidden = d.objectCallsRate === null
  setKpi(card.kpis.objectCalls, d.objectCallsRate, formatRate(d.objectCallsRate))
  const carried = d.itemsPerObjectCall
  card.kpis.itemsPerObjectCall.node.hidden = carried === null
  setKpi(
    card.kpis.itemsPerObjectCall,
    carried && carried.value,
    carried ? [trim(carried.value), ''] : [DASH, ''],
    carried ? windowNote(carried.window, seconds) : '',
  )
  card.kpis.itemsPerObjectCall.value.setAttribute('data-window', carried ? carried.window : '')
  setLegend(card.throughput, 'legend-requests', formatRate(d.requestsRate).join(''))
  setLegend(card.throughput, 'legend-batches', formatRate(d.batchesRate).join(''))

  drawLineChart(card.throughput.chart, {
    now,
    windowS,
    format: axisRate,
    minMax: 1,
    empty: 'no traffic yet',
    series: [
      { tone: 'tone-1', area: true, points: history.requests },
      { tone: 'tone-2', points: history.batches },
    ],
  })
  drawLineChart(card.latency.chart, {
    now,
    windowS,
    format: axisSeconds,
    minMax: 0.001,
    empty: 'no traffic yet',
    series: [
      { tone: 'tone-1', points: history.p50 },
      { tone: 'tone-2', points: history.p95 },
      { tone: 'tone-3', points: history.p99 },
    ],
  })

  // Autoscaling: the count over time (flat for a fixed numReplicas).
  drawLineChart(card.replicaChart.chart, {
    now,
    windowS,
    format: (value) => formatCount(value),
    minMax: 1,
    empty: 'no count reported',
    series: [{ tone: 'tone-1', area: true, points: history.replicas }],
  })

  // Place method views first, then draw: the charts size themselves to their laid-out width.
  for (const name of [...card.methodViews.keys()]) if (!d.methods.some((m) => m.name === name)) card.methodViews.delete(name)
  const views = d.methods.map((m) => {
    let view = card.methodViews.get(m.name)
    if (!view) card.methodViews.set(m.name, (view = createMethod(m.name)))
    return { view, m }
  })
  syncChildren(card.methods, views.length ? views.map(({ view }) => view.root) : [card.methodsEmpty])
  for (const { view, m } of views) updateMethod(view, m, seconds)
  renderOptions(card.options, d.options, ['name'])
}

/**
 * Bars for a cumulative histogram: per-bucket counts, labelled as integer
 * ranges (batch sizes are whole items), shown up to the bucket holding
 * maxBatchSize or the largest batch seen, whichever is further.
 */
function sizeBars(sizes: Histogram, maxBatchSize: unknown): { label: string; value: number }[] {
  const { bounds, counts, count } = sizes
  let last = bounds.findIndex((b) => b >= (Number(maxBatchSize) || 1))
  if (last < 0) last = bounds.length - 1
  counts.forEach((c, i) => {
    if (c > (i ? counts[i - 1]! : 0)) last = Math.max(last, i)
  })
  const bars = []
  for (let i = 0; i <= last; i++) {
    const low = i === 0 ? Math.min(1, bounds[0]!) : bounds[i - 1]! + 1
    const high = bounds[i]!
    bars.push({ label: low >= high ? String(high) : low + '\u2013' + high, value: counts[i]! - (i ? counts[i - 1]! : 0) })
  }
  const over = count - counts[counts.length - 1]!
  if (over > 0) bars.push({ label: '>' + bounds[bounds.length - 1], value: over })
  return bars
}

/** The buckets an empty histogram is drawn with before the first batch. */
const NO_BATCHES: Histogram = { bounds: [1, 2, 4, 8], counts: [0, 0, 0, 0], sum: 0, count: 0 }

function updateMethod(view: MethodView, m: MethodModel, seconds: number): void {
  const max = m.options.maxBatchSize
  const bars = m.sizes ? sizeBars(m.sizes, max) : []
  drawBarChart(view.chart.chart, {
    bars: bars.length ? bars : sizeBars(NO_BATCHES, max),
    unit: 'batches',
    xTitle: 'items per batch',
    empty: 'no batches yet',
  })
  const batches = m.sizes ? m.sizes.count : 0
  setLegend(view.chart, 'batch-size-total', formatCount(batches))
  view.chart.legend.get('batch-size-total')?.setAttribute('data-value', String(batches))

  const mean = m.meanSize ? m.meanSize.value : null
  setReading(
    view.stats.mean,
    mean,
    mean === null ? DASH : trim(mean) + (max ? ' / ' + formatOption(max) : ''),
    m.meanSize ? windowNote(m.meanSize.window, seconds) : '',
  )
  setReading(view.stats.fill, m.fill, formatPercent(m.fill).join(' '), 'of maxBatchSize')
  setReading(view.stats.rate, m.batchesRate, formatRate(m.batchesRate).join(''))
  setReading(view.stats.queue, m.queueLength, formatCount(m.queueLength), 'calls waiting')
  setReading(view.stats.inflight, m.inFlight, formatCount(m.inFlight))
  setReading(view.stats.total, m.batchesTotal, formatCount(m.batchesTotal))
  renderOptions(view.options, m.options, [])
  updateCost(view.cost, m.adaptive)
}

/**
 * The adaptive queue's view of its handler: items per second at each batch
 * size it measured lately (one batch at a time), the size it allows now
 * marked. The limit is where that curve peaks, or the smallest size near
 * the peak (docs/batching.md).
 */
function updateCost(cost: ChartFigure, adaptive: AdaptiveModel | null): void {
  // Unhide before drawing: a hidden chart has no width to size to.
  cost.figure.hidden = adaptive === null
  if (adaptive === null) return
  const limit = cost.legend.get('batch-size-limit')!
  limit.textContent = formatCount(adaptive.limit)
  limit.setAttribute('data-value', String(adaptive.limit))
  const sizes = cost.legend.get('cost-curve-sizes')!
  sizes.textContent = formatCount(adaptive.curve.length)
  sizes.setAttribute('data-value', String(adaptive.curve.length))
  drawBarChart(cost.chart, {
    bars: adaptive.curve.map((point) => ({
      label: String(point.size),
      value: point.itemsPerS,
      marked: point.size === adaptive.limit,
      title: `${point.size} per batch: ${trim(point.ms)} ms a batch, ${formatCount(point.itemsPerS)} items/s (replica ${adaptive.replica})`,
    })),
    unit: 'items/s',
    xTitle: 'batch size (items/s each serves)',
    empty: 'nothing measured lately: no load, or a clock that stands still while code runs',
  })
}
