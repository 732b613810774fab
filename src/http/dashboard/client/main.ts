/**
 * Browser code, shipped as text (see stats.ts for why): the polling loop.
 * One poll at a time (the next is scheduled when the last has settled), so
 * a slow server gets fewer requests rather than a pile-up.
 */
export const MAIN_JS = /* js */ `
// ---- main: poll, remember a minute of history, render ------------------------

const POLL_MS = 1000
const WINDOW_S = 60
let firstPoll = null
const cards = new Map()
const histories = new Map()
let previous = null
let lastRoutes = null
const noDeployments = el('p', { class: 'empty', 'data-testid': 'empty' }, ['No deployments in this app yet.'])

const container = document.getElementById('deployments')
const status = document.querySelector('[data-testid="status"]')
const statusText = status.querySelector('.status-text')
const totals = document.querySelector('[data-testid="total-requests-rate"]')

function setStatus(state, text) {
  status.setAttribute('data-state', state)
  statusText.textContent = text
}

/** Relative URLs: the page lives at /-/dashboard, so this also works behind a path prefix. */
async function getJson(path) {
  // A hung request must not leave the page claiming to be live.
  const response = await fetch(path, { cache: 'no-store', headers: { accept: 'application/json' }, signal: AbortSignal.timeout(5000) })
  if (!response.ok) throw new Error(path + ': HTTP ' + response.status)
  return response.json()
}

function remember(name, time, d) {
  let h = histories.get(name)
  if (!h) histories.set(name, (h = { requests: [], batches: [], p50: [], p95: [], p99: [] }))
  // Only last-interval latencies go on the chart: an all-time fallback plotted over time would read as a live trend.
  const live = d.latency && d.latency.window === 'interval' ? d.latency : null
  const add = (series, value) => {
    series.push([time, value === undefined ? null : value])
    while (series.length && series[0][0] < time - (WINDOW_S + 5) * 1000) series.shift()
  }
  add(h.requests, d.requestsRate)
  add(h.batches, d.batchesRate)
  add(h.p50, live && live.p50)
  add(h.p95, live && live.p95)
  add(h.p99, live && live.p99)
  return h
}

function render(model) {
  const seen = new Set()
  const order = []
  let total = null
  for (const d of model.deployments) {
    seen.add(d.name)
    let card = cards.get(d.name)
    if (!card) cards.set(d.name, (card = createCard(d.name)))
    if (d.requestsRate !== null) total = (total || 0) + d.requestsRate
    const history = remember(d.name, model.time, d)
    order.push({ card, d, history })
  }
  for (const name of [...cards.keys()]) if (!seen.has(name)) { cards.delete(name); histories.delete(name) }
  // Attach before drawing: the charts size themselves to their laid-out width.
  syncChildren(container, order.length ? order.map((o) => o.card.root) : [noDeployments])
  // The charts' time axis grows with the session, in steps of 10 s up to a minute, so a young page is not all empty space.
  if (firstPoll === null) firstPoll = model.time
  const windowS = Math.min(WINDOW_S, Math.max(10, Math.ceil((model.time - firstPoll) / 10000) * 10))
  for (const { card, d, history } of order) updateCard(card, d, history, model.time, windowS, model.seconds)
  totals.textContent = formatRate(total).join('')
  totals.setAttribute('data-value', total === null ? '' : String(total))
}

async function poll() {
  let delay = POLL_MS
  try {
    // Routes only add names and options: if they fail, keep the last ones and still show the metrics.
    const [metrics, routes] = await Promise.all([getJson('metrics.json'), getJson('routes').catch(() => lastRoutes)])
    lastRoutes = routes
    render(buildModel(metrics, previous, routes))
    previous = metrics
    setStatus('live', 'Live \\u00b7 updated ' + new Date(metrics.time).toLocaleTimeString('en-GB'))
  } catch (error) {
    // Keep the last numbers on screen and say they are stale; back off while the server is away.
    setStatus('error', 'Offline \\u00b7 ' + (error && error.message ? error.message : String(error)))
    delay = POLL_MS * 3
  }
  setTimeout(poll, delay)
}

poll()
`
