/**
 * Browser code, shipped as text (see stats.ts for why): the DOM. Each
 * deployment card is built once and then updated in place, so polling does
 * not flicker or lose scroll position. Every server string goes through
 * textContent or setAttribute, never through HTML parsing.
 */
export const VIEW_JS = /* js */ `
// ---- view: cards built once, updated every poll ----------------------------

/** An element with attributes (class, data-*, ...) and children; strings become text nodes. */
function el(tag, attributes, children) {
  const node = document.createElement(tag)
  for (const name in attributes || {}) node.setAttribute(name, String(attributes[name]))
  for (const child of children || []) node.append(child)
  return node
}

/** A figure with a title, a legend and an SVG for one chart. */
function chartFigure(title, testid, legend) {
  const chart = document.createElementNS(SVG_NS, 'svg')
  chart.setAttribute('class', 'chart')
  chart.setAttribute('data-testid', testid)
  chart.setAttribute('role', 'img')
  chart.setAttribute('aria-label', title)
  const keys = legend.map(([tone, label, id]) =>
    el('span', { class: 'key' }, [el('i', { class: 'swatch ' + tone }), label, el('b', { 'data-testid': id }, [DASH])]),
  )
  return { figure: el('figure', { class: 'panel' }, [el('figcaption', {}, [el('h3', {}, [title]), el('div', { class: 'legend' }, keys)]), chart]), chart }
}

/** A headline number: label, value with unit, and a note on the window it covers. */
function kpi(label, testid) {
  const value = el('span', { class: 'value', 'data-testid': testid, 'data-value': '' }, [DASH])
  const unit = el('span', { class: 'unit' })
  const note = el('span', { class: 'note' })
  return { node: el('div', { class: 'kpi' }, [el('span', { class: 'label' }, [label]), el('span', { class: 'figure' }, [value, unit]), note]), value, unit, note }
}

function setKpi(item, raw, [text, unit], note) {
  item.value.textContent = text
  item.value.setAttribute('data-value', raw === null || raw === undefined ? '' : String(raw))
  item.unit.textContent = unit
  item.note.textContent = note || ''
}

/** A definition list of options; rebuilt only when the options change. */
function renderOptions(list, options, skip) {
  const signature = JSON.stringify(options)
  if (list.getAttribute('data-signature') === signature) return
  list.setAttribute('data-signature', signature)
  const rows = []
  for (const [key, value] of flatten(options, '')) {
    if (skip.includes(key)) continue
    rows.push(el('div', { class: 'option', 'data-testid': 'option', 'data-option': key }, [el('dt', {}, [key]), el('dd', {}, [describeOption(key, value)])]))
  }
  list.replaceChildren(...(rows.length ? rows : [el('div', { class: 'muted' }, ['none reported'])]))
}

function flatten(value, prefix) {
  const out = []
  for (const key of Object.keys(value || {})) {
    const item = value[key]
    if (item && typeof item === 'object' && !Array.isArray(item)) out.push(...flatten(item, prefix + key + '.'))
    else out.push([prefix + key, item])
  }
  return out
}

function describeOption(key, value) {
  // Deployment-level maxQueuedRequests uses -1 for "no limit" (batch options already say it in words).
  if (key === 'maxQueuedRequests' && value === -1) return 'unbounded'
  if (/S$/.test(key) && typeof value === 'number') return value + ' s'
  return formatOption(value)
}

/** Make parent's children exactly these nodes, touching the DOM only when they differ (no reflow, no scroll jump). */
function syncChildren(parent, nodes) {
  const current = parent.children
  if (current.length === nodes.length && nodes.every((node, i) => current[i] === node)) return
  parent.replaceChildren(...nodes)
}

function createCard(name) {
  const kpis = {
    requests: kpi('Requests / s', 'requests-rate'),
    batches: kpi('Batches / s', 'batches-rate'),
    p50: kpi('p50 latency', 'latency-p50'),
    p95: kpi('p95 latency', 'latency-p95'),
    p99: kpi('p99 latency', 'latency-p99'),
    failed: kpi('Failed', 'failed-share'),
  }
  const throughput = chartFigure('Throughput', 'throughput-chart', [
    ['tone-1', 'requests/s', 'legend-requests'],
    ['tone-2', 'batches/s', 'legend-batches'],
  ])
  const latency = chartFigure('Latency', 'latency-chart', [
    ['tone-1', 'p50', 'legend-p50'],
    ['tone-2', 'p95', 'legend-p95'],
    ['tone-3', 'p99', 'legend-p99'],
  ])
  const routes = el('div', { class: 'routes' })
  const replicas = el('span', { class: 'pill' })
  const total = el('span', { class: 'pill', 'data-testid': 'requests-total', 'data-value': '' })
  const methods = el('div', { class: 'methods' })
  const options = el('dl', { class: 'options inline' })
  const idleNote = el('p', { class: 'idle-note', 'data-testid': 'idle-note' })
  const root = el('section', { class: 'card', 'data-testid': 'deployment', 'data-deployment': name, 'data-state': 'idle' }, [
    el('header', { class: 'card-head' }, [el('div', { class: 'title' }, [el('h2', {}, [name]), replicas, total]), routes]),
    idleNote,
    el('div', { class: 'kpis' }, Object.values(kpis).map((k) => k.node)),
    el('div', { class: 'charts' }, [throughput.figure, latency.figure]),
    methods,
    el('footer', { class: 'card-foot' }, [el('span', { class: 'eyebrow' }, ['Deployment options']), options]),
  ])
  return { root, kpis, throughput, latency, routes, replicas, total, methods, options, idleNote, methodViews: new Map() }
}

function createMethod(name) {
  const chart = chartFigure('Batch size', 'batch-size-chart', [['tone-bar', 'batches', 'batch-size-total']])
  const stats = {}
  const rows = [
    ['mean', 'Mean batch size', 'batch-size-mean'],
    ['fill', 'Mean fill', 'batch-fill'],
    ['rate', 'Batches / s', 'method-batches-rate'],
    ['queue', 'Queue length', 'queue-length'],
    ['inflight', 'Batches in flight', 'in-flight'],
    ['total', 'Batches total', 'batches-total'],
  ].map(([key, label, testid]) => {
    stats[key] = { value: el('span', { class: 'value', 'data-testid': testid, 'data-value': '' }, [DASH]), note: el('small') }
    return el('div', { class: 'stat' }, [el('dt', {}, [label]), el('dd', {}, [stats[key].value, stats[key].note])])
  })
  const options = el('dl', { class: 'options' })
  const root = el('article', { class: 'method', 'data-testid': 'method', 'data-method': name }, [
    el('header', { class: 'method-head' }, [el('span', { class: 'eyebrow' }, ['Batched method']), el('code', {}, [name])]),
    el('div', { class: 'method-body' }, [
      chart.figure,
      el('div', { class: 'panel' }, [el('h3', {}, ['Batches']), el('dl', { class: 'stats' }, rows)]),
      el('div', { class: 'panel' }, [el('h3', {}, ['Options in force']), options]),
    ]),
  ])
  return { root, chart, stats, options }
}

function setStat(stat, raw, text, note) {
  stat.value.textContent = text
  stat.value.setAttribute('data-value', raw === null || raw === undefined ? '' : String(raw))
  stat.note.textContent = note || ''
}

/** Which observations a number covers: the last poll interval, or all of them when that was idle. */
function windowNote(window, seconds) {
  if (window === 'cumulative') return 'since start'
  return 'last ' + (seconds > 0 && seconds < 10 ? Number(seconds.toFixed(1)) : Math.round(seconds)) + ' s'
}

function updateCard(card, d, history, now, windowS, seconds) {
  // A deployment that has seen nothing gets one line instead of a wall of empty charts; set before
  // drawing, since hidden charts have no width to size to.
  const idle = !d.requestsTotal && !d.methods.some((m) => m.sizes && m.sizes.count > 0)
  card.root.setAttribute('data-state', idle ? 'idle' : 'active')
  card.idleNote.textContent = 'No traffic yet. ' + (d.routes.length
    ? 'Requests to ' + d.routes.map((r) => r.method + ' ' + r.path).join(' or ') + ' show up here within a second.'
    : 'Calls through a handle show up here within a second.')
  card.replicas.textContent = d.replicas ? d.replicas + (d.replicas === 1 ? ' replica' : ' replicas') : 'not started'
  card.total.textContent = formatCount(d.requestsTotal || 0) + ' requests'
  card.total.setAttribute('data-value', String(d.requestsTotal || 0))
  card.routes.replaceChildren(
    ...(d.routes.length
      ? d.routes.map((r) => el('code', { class: 'route' }, [el('b', {}, [r.method]), ' ' + r.path]))
      : [el('span', { class: 'muted' }, ['handles only, no HTTP route'])]),
  )

  setKpi(card.kpis.requests, d.requestsRate, formatRate(d.requestsRate), d.requestsRate === null ? 'waiting for a 2nd poll' : '')
  setKpi(card.kpis.batches, d.batchesRate, formatRate(d.batchesRate), '')
  const note = d.latency ? windowNote(d.latency.window, seconds) : 'no traffic yet'
  for (const q of ['p50', 'p95', 'p99']) {
    setKpi(card.kpis[q], d.latency && d.latency[q], formatSeconds(d.latency && d.latency[q]), note)
    card.kpis[q].value.setAttribute('data-window', d.latency ? d.latency.window : '')
  }
  setKpi(card.kpis.failed, d.failedShare, formatPercent(d.failedShare), 'status \\u2265 400')

  const legend = (id, text) => { card.root.querySelector('[data-testid="' + id + '"]').textContent = text }
  legend('legend-requests', formatRate(d.requestsRate).join(''))
  legend('legend-batches', formatRate(d.batchesRate).join(''))
  for (const q of ['p50', 'p95', 'p99']) legend('legend-' + q, formatSeconds(d.latency && d.latency[q]).join(' '))

  drawLineChart(card.throughput.chart, {
    now, windowS, format: axisRate, minMax: 1, empty: 'no traffic yet',
    series: [
      { tone: 'tone-1', area: true, points: history.requests },
      { tone: 'tone-2', points: history.batches },
    ],
  })
  drawLineChart(card.latency.chart, {
    now, windowS, format: axisSeconds, minMax: 0.001, empty: 'no traffic yet',
    series: [
      { tone: 'tone-1', points: history.p50 },
      { tone: 'tone-2', points: history.p95 },
      { tone: 'tone-3', points: history.p99 },
    ],
  })

  // Place method views first, then draw: the charts size themselves to their laid-out width.
  for (const name of [...card.methodViews.keys()]) if (!d.methods.some((m) => m.name === name)) card.methodViews.delete(name)
  for (const m of d.methods) if (!card.methodViews.has(m.name)) card.methodViews.set(m.name, createMethod(m.name))
  if (!d.methods.length) card.methodsEmpty = card.methodsEmpty || el('p', { class: 'muted methods-empty' }, ['No batched methods reported yet: a replica lists them once it has started.'])
  syncChildren(card.methods, d.methods.length ? d.methods.map((m) => card.methodViews.get(m.name).root) : [card.methodsEmpty])
  for (const m of d.methods) updateMethod(card.methodViews.get(m.name), m, seconds)
  renderOptions(card.options, d.options, ['name'])
}

/**
 * Bars for a cumulative histogram: per-bucket counts, labelled as integer
 * ranges (batch sizes are whole items), shown up to the bucket holding
 * maxBatchSize or the largest batch seen, whichever is further.
 */
function sizeBars(sizes, maxBatchSize) {
  if (!sizes) return []
  const { bounds, counts, count } = sizes
  let last = bounds.findIndex((b) => b >= (Number(maxBatchSize) || 1))
  if (last < 0) last = bounds.length - 1
  counts.forEach((c, i) => { if (c > (i ? counts[i - 1] : 0)) last = Math.max(last, i) })
  const bars = []
  for (let i = 0; i <= last; i++) {
    const low = i === 0 ? Math.min(1, bounds[0]) : bounds[i - 1] + 1
    const high = bounds[i]
    bars.push({ label: low >= high ? String(high) : low + '\\u2013' + high, value: counts[i] - (i ? counts[i - 1] : 0) })
  }
  const over = count - counts[counts.length - 1]
  if (over > 0) bars.push({ label: '>' + bounds[bounds.length - 1], value: over })
  return bars
}

function updateMethod(view, m, seconds) {
  const max = m.options.maxBatchSize
  const bars = sizeBars(m.sizes, max)
  drawBarChart(view.chart.chart, {
    bars: bars.length ? bars : sizeBars({ bounds: [1, 2, 4, 8], counts: [0, 0, 0, 0], count: 0 }, max),
    unit: 'batches', xTitle: 'items per batch', empty: 'no batches yet',
  })
  const total = view.chart.figure.querySelector('[data-testid="batch-size-total"]')
  total.textContent = formatCount(m.sizes ? m.sizes.count : 0)
  total.setAttribute('data-value', String(m.sizes ? m.sizes.count : 0))

  const mean = m.meanSize && m.meanSize.value
  setStat(view.stats.mean, mean, mean === null || mean === undefined ? DASH : trim(mean) + (max ? ' / ' + max : ''), m.meanSize ? windowNote(m.meanSize.window, seconds) : '')
  setStat(view.stats.fill, m.fill, formatPercent(m.fill).join(' '), 'of maxBatchSize')
  setStat(view.stats.rate, m.batchesRate, formatRate(m.batchesRate).join(''), '')
  setStat(view.stats.queue, m.queueLength, formatCount(m.queueLength), 'calls waiting')
  setStat(view.stats.inflight, m.inFlight, formatCount(m.inFlight), '')
  setStat(view.stats.total, m.batchesTotal, formatCount(m.batchesTotal), '')
  renderOptions(view.options, m.options, [])
}
`
