/**
 * The dashboard's entry: poll, remember a minute of history, render. One poll
 * at a time (the next is scheduled when the last has settled), so a slow
 * server gets fewer requests rather than a pile-up.
 */
import { el, required, syncChildren } from './dom.js'
import { formatRate } from './format.js'
import { buildModel, type DeploymentModel, type Model } from './stats.js'
import { createCard, updateCard, type Card, type History } from './view.js'
import type { MetricsBody, RoutesBody } from './wire.js'

const POLL_MS = 1000
const WINDOW_S = 60
/** A hung request must not leave the page claiming to be live. */
const REQUEST_TIMEOUT_MS = 5000

const container = required(document, '#deployments', HTMLElement)
const status = required(document, '[data-testid="status"]', HTMLElement)
const statusText = required(status, '.status-text', HTMLElement)
const totals = required(document, '[data-testid="total-requests-rate"]', HTMLElement)
const noDeployments = el('p', { class: 'empty', 'data-testid': 'empty' }, ['No deployments in this app yet.'])

const cards = new Map<string, Card>()
const histories = new Map<string, History>()
let firstPoll: number | null = null
let previous: MetricsBody | null = null
let lastRoutes: RoutesBody | null = null

function setStatus(state: 'live' | 'error', text: string): void {
  status.setAttribute('data-state', state)
  statusText.textContent = text
}

/**
 * Relative URLs: the page lives at /-/dashboard, so this also works behind a
 * path prefix. The body is this server's own JSON (src/http/admin.ts), taken
 * at its word; stats.ts still tolerates missing families.
 */
async function getJson<T>(path: string): Promise<T> {
  const response = await fetch(path, { cache: 'no-store', headers: { accept: 'application/json' }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })
  if (!response.ok) throw new Error(path + ': HTTP ' + response.status)
  return (await response.json()) as T
}

function remember(name: string, time: number, d: DeploymentModel): History {
  let h = histories.get(name)
  if (!h) histories.set(name, (h = { requests: [], batches: [], p50: [], p95: [], p99: [], replicas: [] }))
  // Only last-interval latencies go on the chart: an all-time fallback plotted over time would read as a live trend.
  const live = d.latency && d.latency.window === 'interval' ? d.latency : null
  const add = (series: History[keyof History], value: number | null) => {
    series.push([time, value])
    while (series.length && series[0]![0] < time - (WINDOW_S + 5) * 1000) series.shift()
  }
  add(h.requests, d.requestsRate)
  add(h.batches, d.batchesRate)
  add(h.p50, live && live.p50)
  add(h.p95, live && live.p95)
  add(h.p99, live && live.p99)
  add(h.replicas, d.replicas)
  return h
}

function render(model: Model): void {
  const seen = new Set<string>()
  const order: { card: Card; d: DeploymentModel; history: History }[] = []
  let total: number | null = null
  for (const d of model.deployments) {
    seen.add(d.name)
    let card = cards.get(d.name)
    if (!card) cards.set(d.name, (card = createCard(d.name)))
    if (d.requestsRate !== null) total = (total ?? 0) + d.requestsRate
    order.push({ card, d, history: remember(d.name, model.time, d) })
  }
  for (const name of [...cards.keys()]) {
    if (seen.has(name)) continue
    cards.delete(name)
    histories.delete(name)
  }
  // Attach before drawing: the charts size themselves to their laid-out width.
  syncChildren(container, order.length ? order.map((o) => o.card.root) : [noDeployments])
  // The charts' time axis grows with the session, in steps of 10 s up to a minute, so a young page is not all empty space.
  firstPoll ??= model.time
  const windowS = Math.min(WINDOW_S, Math.max(10, Math.ceil((model.time - firstPoll) / 10000) * 10))
  for (const { card, d, history } of order) updateCard(card, d, history, model.time, windowS, model.seconds)
  totals.textContent = formatRate(total).join('')
  totals.setAttribute('data-value', total === null ? '' : String(total))
}

async function poll(): Promise<void> {
  let delay = POLL_MS
  try {
    // Routes only add names and options: if they fail, keep the last ones and still show the metrics.
    const [metrics, routes] = await Promise.all([getJson<MetricsBody>('metrics.json'), getJson<RoutesBody>('routes').catch(() => lastRoutes)])
    lastRoutes = routes
    render(buildModel(metrics, previous, routes))
    previous = metrics
    setStatus('live', 'Live \u00b7 updated ' + new Date(metrics.time).toLocaleTimeString('en-GB'))
  } catch (error) {
    // Keep the last numbers on screen and say they are stale; back off while the server is away.
    setStatus('error', 'Offline \u00b7 ' + (error instanceof Error ? error.message : String(error)))
    delay = POLL_MS * 3
  }
  setTimeout(() => void poll(), delay)
}

void poll()
