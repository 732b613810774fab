/**
 * The live dashboard in a real browser: the demo app on a real port, real
 * load over loopback, Chromium reading the page, and the numbers it shows
 * checked against /-/metrics.json; on Node, and for the object calls only a
 * Worker makes, the demo Worker in workerd. Leaves a screenshot in
 * test-results/ (in docs/images, for the README, when UPDATE_SCREENSHOTS=1).
 */
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Hono } from 'hono'
import { CHROMIUM, requireChromium } from '../support/chromium.js'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { app as demo } from '../../examples/demo/app.js'
import { batch, deployment, ingress } from '../../src/index.js'
import type { HistogramSample, MetricFamily } from '../../src/metrics/registry.js'
import { serve, type RunningServer } from '../../src/runtime/node/index.js'
import { dashboard } from '../../src/http/dashboard/index.js'
import { trim } from '../../src/http/dashboard/client/format.js'
import { startWorker } from '../support/workerd.js'

const SCREENSHOT = fileURLToPath(
  new URL(process.env.UPDATE_SCREENSHOTS === '1' ? '../../docs/images/dashboard.png' : '../../test-results/dashboard.png', import.meta.url),
)

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

// --- what the page shows, read in one go so a poll cannot land mid-read ---

interface Reading {
  text: string
  value: number | null
  window: string | null
  /** On screen: false for a figure the card hides, or a card that is idle. */
  shown: boolean
}
interface MethodView {
  values: Record<string, Reading>
  bars: { bucket: string; count: number }[]
  /** The adaptive cost chart: shown or not, and its bars (items/s by batch size, the allowed size marked). */
  cost: { shown: boolean; bars: { bucket: string; count: number; marked: boolean }[] }
  options: Record<string, string>
}
interface DeploymentView {
  values: Record<string, Reading>
  options: Record<string, string>
  points: Record<string, number>
  routes: string[]
  methods: Record<string, MethodView>
}

/** Passed as a string: the page runs it as is, whatever this file was compiled to. */
const READ_DASHBOARD = `(() => {
  const readings = (root, skip) => {
    const out = {}
    for (const node of root.querySelectorAll('[data-value]')) {
      if (skip && skip.contains(node)) continue
      const raw = node.getAttribute('data-value')
      out[node.getAttribute('data-testid')] = {
        text: node.textContent,
        value: raw === '' ? null : Number(raw),
        window: node.getAttribute('data-window'),
        shown: node.checkVisibility(),
      }
    }
    return out
  }
  const optionsIn = (root) => {
    const options = {}
    for (const o of root.querySelectorAll('[data-testid="option"]')) options[o.getAttribute('data-option')] = o.querySelector('dd').textContent
    return options
  }
  const result = {}
  for (const card of document.querySelectorAll('[data-testid="deployment"]')) {
    const methods = {}
    for (const method of card.querySelectorAll('[data-testid="method"]')) {
      methods[method.getAttribute('data-method')] = {
        values: readings(method),
        bars: [...method.querySelectorAll('[data-testid="batch-size-chart"] rect.bar')].map((r) => ({ bucket: r.getAttribute('data-bucket'), count: Number(r.getAttribute('data-count')) })),
        cost: {
          shown: method.querySelector('figure.cost').checkVisibility(),
          bars: [...method.querySelectorAll('[data-testid="cost-curve-chart"] rect.bar')].map((r) => ({
            bucket: r.getAttribute('data-bucket'),
            count: Number(r.getAttribute('data-count')),
            marked: r.classList.contains('marked'),
          })),
        },
        options: optionsIn(method),
      }
    }
    const points = {}
    for (const chart of card.querySelectorAll('svg.chart')) points[chart.getAttribute('data-testid')] = Number(chart.getAttribute('data-points'))
    result[card.getAttribute('data-deployment')] = {
      values: readings(card, card.querySelector('.methods')),
      options: optionsIn(card.querySelector('.card-foot')),
      points,
      routes: [...card.querySelectorAll('.route')].map((r) => r.textContent),
      methods,
    }
  }
  return result
})()`

const readDashboard = (page: Page) => page.evaluate<Record<string, DeploymentView>>(READ_DASHBOARD)

// --- the server's own numbers ----------------------------------------------

async function metricsJson(base: string): Promise<MetricFamily[]> {
  const body = (await (await fetch(`${base}/-/metrics.json`)).json()) as { metrics: MetricFamily[] }
  return body.metrics
}

function matching(labels: Record<string, string>, match: Record<string, string>) {
  return Object.entries(match).every(([k, v]) => labels[k] === v)
}

function counterSum(metrics: MetricFamily[], name: string, match: Record<string, string>): number {
  const family = metrics.find((f) => f.name === name)
  if (!family || family.type === 'histogram') return 0
  return family.samples.filter((s) => matching(s.labels, match)).reduce((a, s) => a + s.value, 0)
}

function histogramSum(metrics: MetricFamily[], name: string, match: Record<string, string>) {
  const family = metrics.find((f) => f.name === name)
  if (!family || family.type !== 'histogram') throw new Error(`no histogram ${name}`)
  const samples = family.samples.filter((s) => matching(s.labels, match))
  const add = (pick: (s: HistogramSample) => number) => samples.reduce((a, s) => a + pick(s), 0)
  return {
    bounds: family.buckets,
    counts: family.buckets.map((_, i) => add((s) => s.counts[i]!)),
    sum: add((s) => s.sum),
    count: add((s) => s.count),
  }
}

/** Reference histogram_quantile (Prometheus' algorithm), written apart from the page's copy. */
function histogramQuantile(q: number, h: { bounds: number[]; counts: number[]; count: number }): number {
  const rank = q * h.count
  const i = h.counts.findIndex((c) => c >= rank)
  if (i === -1) return h.bounds[h.bounds.length - 1]!
  const lower = i === 0 ? 0 : h.bounds[i - 1]!
  const below = i === 0 ? 0 : h.counts[i - 1]!
  return lower + (h.bounds[i]! - lower) * ((rank - below) / (h.counts[i]! - below))
}

// --- bounded load ----------------------------------------------------------

/** Workers that keep requests in flight until a count or a time cap, whichever comes first. */
async function load(base: string, paths: string[], caps: { workers: number; requests: number; ms: number }) {
  const deadline = Date.now() + caps.ms
  const sent = new Map<string, number>()
  const failures: string[] = []
  let issued = 0
  const worker = async () => {
    while (issued < caps.requests && Date.now() < deadline) {
      const path = paths[issued % paths.length]!
      const n = issued++
      try {
        const response = await fetch(`${base}${path}?number=${n}`, { signal: AbortSignal.timeout(5_000) })
        const text = await response.text()
        if (response.status !== 200 || text !== String(n + 1)) failures.push(`${path} ${response.status} ${text.slice(0, 80)}`)
        else sent.set(path, (sent.get(path) ?? 0) + 1)
      } catch (error) {
        failures.push(`${path} ${String(error)}`)
      }
      // A little think time spreads the load over several polls, so the live charts have a shape.
      await sleep(10 + Math.random() * 40)
    }
  }
  await Promise.all(Array.from({ length: caps.workers }, worker))
  return { sent, failures }
}

// --- the tests -------------------------------------------------------------

describe('dashboard in Chromium', () => {
  let server: RunningServer | undefined
  let browser: Browser | undefined
  const pageErrors: string[] = []

  beforeAll(async () => {
    requireChromium()
    // The demo's batched methods print each batch's shape; under load that drowns the test output.
    vi.spyOn(console, 'log').mockImplementation(() => undefined)
    server = await serve(demo, { port: 0, handleSignals: false, name: 'dashboard-test' })
    const { chromium } = await import('playwright-core')
    // Playwright adds --headless, --no-sandbox, a fresh temporary --user-data-dir and
    // its quiet-startup switches (no first run, sync, component updates, background networking).
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--disable-gpu'], timeout: 20_000 })
  })

  afterAll(async () => {
    // Each step on its own, so one failure does not leave the other running.
    await browser?.close().catch(() => undefined)
    await server?.close().catch(() => undefined)
    vi.restoreAllMocks()
  })

  async function openDashboard(base: string): Promise<Page> {
    const page = await browser!.newPage({ viewport: { width: 1280, height: 900 }, colorScheme: 'light' })
    page.on('pageerror', (error) => pageErrors.push(error.message))
    page.on('console', (message) => {
      if (message.type() === 'error') pageErrors.push(message.text())
    })
    const response = await page.goto(`${base}/-/dashboard`)
    expect(response?.status()).toBe(200)
    const policy = response?.headers()['content-security-policy']
    expect(policy).toContain("default-src 'none'")
    // Inline script and style run by their hashes alone (test/node/dashboard.test.ts checks the hashes).
    expect(policy).toMatch(/script-src 'sha256-[A-Za-z0-9+/]{43}='; style-src 'sha256-[A-Za-z0-9+/]{43}='/)
    expect(policy).not.toContain('unsafe-inline')
    await page.waitForSelector('[data-testid="status"][data-state="live"]', { timeout: 10_000 })
    return page
  }

  it('lists every deployment, its options, and says "no traffic yet" before any request', async () => {
    const page = await openDashboard(server!.url)
    try {
      const view = await readDashboard(page)
      // The demo grows; these two are the ones this file drives.
      expect(Object.keys(view)).toEqual(expect.arrayContaining(['BatchAdder', 'OriginAwareAdder']))
      expect(view.BatchAdder!.routes).toEqual(['GET /adder'])
      expect(view.BatchAdder!.values['latency-p50']!.value).toBeNull()
      expect(view.BatchAdder!.points['latency-chart']).toBe(0)
      // Deployment options come from /-/routes even before the replica starts.
      expect(view.BatchAdder!.options).toMatchObject({ numReplicas: '1', maxOngoingRequests: '100', maxQueuedRequests: 'unbounded' })
      // Replica counts come from the deployments' own gauge: the fixed one's count, the autoscaled one idle at zero.
      expect(view.BatchAdder!.values.replicas).toMatchObject({ value: 1, text: '1 replica' })
      expect(view.ScaledAdder!.values.replicas).toMatchObject({ value: 0, text: '0 replicas' })
      expect(view.ScaledAdder!.options).toMatchObject({ numReplicas: 'auto' })
      const card = page.locator('[data-testid="deployment"][data-deployment="BatchAdder"]')
      expect(await card.getAttribute('data-state')).toBe('idle')
      expect(await card.locator('[data-testid="idle-note"]').textContent()).toBe('No traffic yet. Requests to GET /adder show up here within a second.')
      expect(await card.locator('[data-testid="idle-note"]').isVisible()).toBe(true)
      expect(await card.locator('[data-testid="throughput-chart"]').isVisible()).toBe(false)
      expect(pageErrors).toEqual([])
    } finally {
      await page.close()
    }
  })

  it('shows live throughput, latency and batch sizes that match /-/metrics.json', async () => {
    const base = server!.url
    const page = await openDashboard(base)
    try {
      const started = Date.now()
      const running = load(base, ['/adder', '/adder-origin', '/adder-origin/handle', '/adder'], { workers: 48, requests: 8_000, ms: 8_000 })

      // Live: a rate above zero, an interval p50, batches counted, points on both line charts.
      // (Polled from here: the page's CSP rightly forbids the eval that waitForFunction needs.)
      await expect
        .poll(
          async () => {
            const v = (await readDashboard(page)).BatchAdder
            return Boolean(
              v &&
              v.values['requests-rate']!.value! > 0 &&
              v.values['latency-p50']!.window === 'interval' &&
              v.points['latency-chart']! >= 2 &&
              (v.methods.handleBatch?.values['batch-size-total']?.value ?? 0) > 0,
            )
          },
          { timeout: 10_000, interval: 200 },
        )
        .toBe(true)
      const live = await readDashboard(page)
      for (const name of ['BatchAdder', 'OriginAwareAdder']) {
        const d = live[name]!
        expect(d.values['requests-rate']!.value).toBeGreaterThan(0)
        expect(d.values['batches-rate']!.value).toBeGreaterThan(0)
        const [p50, p95, p99] = ['p50', 'p95', 'p99'].map((q) => d.values[`latency-${q}`]!.value!)
        expect(p50).toBeGreaterThan(0)
        expect(p50).toBeLessThanOrEqual(p95!)
        expect(p95).toBeLessThanOrEqual(p99!)
        expect(d.values['latency-p50']!.text).toMatch(/^\d/)
        expect(d.points['throughput-chart']).toBeGreaterThan(0)
        expect(d.points['replicas-chart']).toBeGreaterThan(0)
        // No replica on Node is reached by a call into a Durable Object: neither figure, not even a dash.
        expect(d.values['requests-rate']!.shown).toBe(true)
        expect(d.values['object-calls-rate']).toMatchObject({ shown: false, value: null })
        expect(d.values['object-call-items']).toMatchObject({ shown: false, value: null })
      }

      // The picture for the docs, while the charts are moving.
      await sleep(Math.max(0, started + 6_500 - Date.now()))
      mkdirSync(dirname(SCREENSHOT), { recursive: true })
      await page.screenshot({ path: SCREENSHOT, fullPage: true })

      const { sent, failures } = await running
      expect(failures).toEqual([])
      const sentTo = (...paths: string[]) => paths.reduce((a, p) => a + (sent.get(p) ?? 0), 0)

      // Idle now: once the page has caught up, its numbers are the cumulative ones, exactly the server's.
      const metrics = await metricsJson(base)
      await expect
        .poll(
          async () => {
            const v = await readDashboard(page)
            return ['BatchAdder', 'OriginAwareAdder'].map((n) => [v[n]!.values['requests-total']!.value, v[n]!.values['latency-p50']!.window])
          },
          { timeout: 5_000, interval: 250 },
        )
        .toEqual([
          [counterSum(metrics, 'edgeserve_requests_total', { deployment: 'BatchAdder' }), 'cumulative'],
          [counterSum(metrics, 'edgeserve_requests_total', { deployment: 'OriginAwareAdder' }), 'cumulative'],
        ])
      const idle = await readDashboard(page)

      expect(idle.BatchAdder!.values['requests-total']!.value).toBe(sentTo('/adder'))
      expect(idle.OriginAwareAdder!.values['requests-total']!.value).toBe(sentTo('/adder-origin', '/adder-origin/handle'))
      expect(idle.BatchAdder!.values['requests-rate']!.value).toBe(0)

      for (const name of ['BatchAdder', 'OriginAwareAdder']) {
        const d = idle[name]!
        const latency = histogramSum(metrics, 'edgeserve_request_duration_seconds', { deployment: name })
        for (const q of [0.5, 0.95, 0.99]) {
          const shown = d.values[`latency-p${Math.round(q * 100)}`]!.value!
          expect(Math.abs(shown - histogramQuantile(q, latency))).toBeLessThan(1e-12)
        }

        const method = d.methods.handleBatch!
        const sizes = histogramSum(metrics, 'edgeserve_batch_size', { deployment: name, method: 'handleBatch' })
        const batches = counterSum(metrics, 'edgeserve_batches_total', { deployment: name, method: 'handleBatch' })
        expect(sizes.count).toBeGreaterThan(0)
        expect(method.values['batch-size-total']!.value).toBe(sizes.count)
        expect(method.values['batches-total']!.value).toBe(batches)
        expect(sizes.count).toBe(batches)
        // The bars are the per-bucket counts: they add up to the total and put nothing above maxBatchSize (4).
        expect(method.bars.reduce((a, b) => a + b.count, 0)).toBe(sizes.count)
        expect(method.bars.map((b) => b.bucket)).toEqual(['1', '2', '3–4'])
        expect(method.values['batch-size-mean']!.value).toBeCloseTo(sizes.sum / sizes.count, 9)
        expect(method.values['batch-size-mean']!.value).toBeLessThanOrEqual(4)
        expect(method.values['queue-length']!.value).toBe(0)
        expect(method.options.maxBatchSize).toBe('4')
        expect(method.options.batchWaitTimeoutS).toBe('0 s')
      }
      // Batching happened where work takes time (5 ms a batch): calls shared batches.
      expect(idle.OriginAwareAdder!.methods.handleBatch!.values['batch-size-mean']!.value).toBeGreaterThan(1)
      expect(pageErrors).toEqual([])
    } finally {
      await page.close()
    }
  })

  it("draws an adaptive method's measured cost and the batch size it allows, as /-/routes and the gauge report them", async () => {
    // A fixed 3 ms a batch, so bigger batches serve more; and a method without adaptive beside it.
    class Measured {
      adaptive = batch(
        async (xs: number[]) => {
          await sleep(3)
          return xs.map((x) => x + 1)
        },
        { maxBatchSize: 16, adaptive: true },
      )
      fixed = batch(async (xs: number[]) => xs, { maxBatchSize: 4 })
      async fetch(request: Request) {
        const n = Number(new URL(request.url).searchParams.get('number'))
        return String(await this.adaptive(await this.fixed(n)))
      }
    }
    const other = await serve(new Hono().get('/measured', ingress(deployment(Measured))), { port: 0, handleSignals: false, name: 'dashboard-adaptive-test' })
    try {
      const page = await openDashboard(other.url)
      try {
        const running = load(other.url, ['/measured'], { workers: 48, requests: 6_000, ms: 5_000 })
        // Under load: the cost chart shows sizes it measured (sizes of its ladder), one of them marked as the size allowed.
        await expect
          .poll(async () => (await readDashboard(page)).Measured?.methods.adaptive?.cost.bars.length ?? 0, { timeout: 8_000, interval: 200 })
          .toBeGreaterThan(1)
        const live = (await readDashboard(page)).Measured!.methods
        expect(live.adaptive!.cost.shown).toBe(true)
        expect(live.adaptive!.cost.bars.every((b) => ['1', '2', '3', '4', '6', '8', '11', '16'].includes(b.bucket) && b.count > 0)).toBe(true)
        expect(live.adaptive!.values['cost-curve-sizes']!.value).toBe(live.adaptive!.cost.bars.length)
        const limit = live.adaptive!.values['batch-size-limit']!.value!
        expect(live.adaptive!.cost.bars.filter((b) => b.marked).map((b) => b.bucket)).toEqual(
          live.adaptive!.cost.bars.some((b) => b.bucket === String(limit)) ? [String(limit)] : [],
        )
        expect(live.fixed!.cost.shown).toBe(false)
        const { failures } = await running
        expect(failures).toEqual([])

        // Idle: the limit no longer moves, and the page shows the server's figure.
        const routes = (await (await fetch(`${other.url}/-/routes`)).json()) as {
          deployments: { name: string; adaptive: { methods: Record<string, { batchSizeLimit: number }> } }[]
        }
        const reported = routes.deployments.find((d) => d.name === 'Measured')!.adaptive.methods.adaptive!.batchSizeLimit
        const gauge = (await metricsJson(other.url)).find((f) => f.name === 'edgeserve_batch_size_limit')!
        expect(counterSum([gauge], 'edgeserve_batch_size_limit', { deployment: 'Measured', method: 'adaptive' })).toBe(reported)
        await expect
          .poll(async () => (await readDashboard(page)).Measured!.methods.adaptive!.values['batch-size-limit']!.value, { timeout: 5_000, interval: 200 })
          .toBe(reported)
        expect(pageErrors).toEqual([])
      } finally {
        await page.close()
      }
    } finally {
      await other.close()
    }
  })

  it("shows a Worker's calls into its Durable Objects and the items each carried, as /-/metrics.json counts them", { timeout: 120_000 }, async () => {
    // The demo Worker in workerd: each replica is a Durable Object that counts the calls it takes and what
    // each carried, since the Worker's isolate gathers its concurrent requests to a replica into one call.
    const worker = await startWorker(new URL('../../wrangler.toml', import.meta.url))
    try {
      const page = await openDashboard(worker.url)
      try {
        // workerd evicts an object idle for 10 s, and its counters with it: the reads below follow the load closely.
        const running = load(worker.url, ['/adder'], { workers: 48, requests: 3_000, ms: 5_000 })
        await expect
          .poll(
            async () => {
              const v = (await readDashboard(page)).BatchAdder?.values
              return Boolean(v && v['object-calls-rate']!.value! > 0 && v['object-call-items']!.window === 'interval')
            },
            { timeout: 10_000, interval: 200 },
          )
          .toBe(true)
        const live = (await readDashboard(page)).BatchAdder!.values
        expect(live['object-calls-rate']!.shown).toBe(true)
        expect(live['object-call-items']!.shown).toBe(true)
        expect(live['object-call-items']!.value).toBeGreaterThanOrEqual(1)
        expect(live['object-call-items']!.text).toBe(trim(live['object-call-items']!.value!))
        const { failures } = await running
        expect(failures).toEqual([])

        // Idle: no calls go in, and the mean is over every call since start, exactly the server's.
        const metrics = await metricsJson(worker.url)
        const items = histogramSum(metrics, 'edgeserve_object_call_items', { deployment: 'BatchAdder' })
        expect(items.count).toBe(counterSum(metrics, 'edgeserve_object_calls_total', { deployment: 'BatchAdder' }))
        // Each request the replica served came in exactly one call.
        expect(items.sum).toBe(counterSum(metrics, 'edgeserve_requests_total', { deployment: 'BatchAdder' }))
        await expect
          .poll(
            async () => {
              const v = (await readDashboard(page)).BatchAdder!.values
              return [v['object-calls-rate']!.value, v['object-call-items']!.value, v['object-call-items']!.window]
            },
            { timeout: 5_000, interval: 250 },
          )
          .toEqual([0, items.sum / items.count, 'cumulative'])
        const idle = (await readDashboard(page)).BatchAdder!.values
        expect(idle['object-calls-rate']).toMatchObject({ shown: true, text: '0' })
        expect(idle['object-call-items']!.shown).toBe(true)
        expect(await page.locator('[data-deployment="BatchAdder"] .kpi:has([data-testid="object-call-items"]) .note').textContent()).toBe('since start')
        expect(pageErrors).toEqual([])
      } finally {
        await page.close()
      }
    } finally {
      await worker.dispose()
    }
  })

  it('shows strings from the server as text, never as markup', async () => {
    const hostile = '<img src=x onerror="window.__pwned=1">'
    class Escapes {
      [hostile] = batch(async (xs: number[]) => xs.map((x) => x + 1))
      async fetch(request: Request) {
        return String(await this[hostile](Number(new URL(request.url).searchParams.get('number'))))
      }
    }
    const escapes = deployment(Escapes, { name: 'escape_check' })
    const app = new Hono().get('/escape', ingress(escapes)).get('/<script>window.__pwned=2</script>', ingress(escapes))
    const other = await serve(app, { port: 0, handleSignals: false, name: 'dashboard-escape-test' })
    try {
      expect(await (await fetch(`${other.url}/escape?number=1`)).text()).toBe('2')
      const page = await openDashboard(other.url)
      try {
        await page.waitForSelector('[data-testid="method"]', { timeout: 5_000 })
        const view = await readDashboard(page)
        expect(Object.keys(view['escape_check']!.methods)).toEqual([hostile])
        expect(view['escape_check']!.routes).toContain('GET /<script>window.__pwned=2</script>')
        expect(await page.evaluate('window.__pwned')).toBeUndefined()
        expect(await page.locator('main img, main script').count()).toBe(0)
        expect(pageErrors).toEqual([])
      } finally {
        await page.close()
      }
    } finally {
      await other.close()
    }
  })

  it('runs only its own script and stylesheet: an inline script or style the CSP does not name is refused', async () => {
    // The real page with one more inline script and style, as an injection into the HTML would add them.
    const injected = {
      ...dashboard,
      html: dashboard.html.replace('</body>', '<script>window.__injected = 1</script><style>body { display: none }</style></body>'),
    }
    const other = await serve(demo, { port: 0, handleSignals: false, name: 'dashboard-csp-test', dashboard: injected })
    const page = await browser!.newPage({ viewport: { width: 1280, height: 900 } })
    const violations: string[] = []
    page.on('console', (message) => {
      if (message.type() === 'error') violations.push(message.text())
    })
    try {
      await page.goto(`${other.url}/-/dashboard`)
      // The page's own script still runs (it goes live) and its own stylesheet still applies...
      await page.waitForSelector('[data-testid="status"][data-state="live"]', { timeout: 10_000 })
      expect(await page.evaluate('getComputedStyle(document.querySelector(".top")).position')).toBe('sticky')
      // ...while the injected ones do not.
      expect(await page.evaluate('window.__injected')).toBeUndefined()
      expect(await page.evaluate('getComputedStyle(document.body).display')).toBe('block')
      expect(violations.filter((v) => v.includes('Content Security Policy'))).toHaveLength(2)
    } finally {
      await page.close()
      await other.close()
    }
  })
})
