/**
 * The dashboard page as the server sends it: the built page on Node by
 * default, none when told so, and a strict CSP that allows exactly the
 * page's own inline script and stylesheet, by hash. (What the page shows
 * is checked in a real browser in test/browser/dashboard.test.ts.) And
 * /-/routes, which feeds the page what an adaptive batched method measured.
 */
import { createHash } from 'node:crypto'
import { Hono } from 'hono'
import { describe, expect, it } from 'vitest'
import { batch, deployment, ingress } from '../../src/index.js'
import { serve } from '../../src/runtime/node/index.js'
import { serveWorker } from '../../src/runtime/workers/worker.js'
import { dashboard } from '../../src/http/dashboard/index.js'

class Echo {
  handle = batch(async (xs: number[]) => xs)
  async fetch(request: Request) {
    return String(await this.handle(Number(new URL(request.url).searchParams.get('x'))))
  }
}
const app = new Hono().get('/echo', ingress(deployment(Echo)))

const sha256 = (text: string) => `sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}`

/** The text of every element with this tag, as the browser would hash it. */
function contentsOf(html: string, tag: 'script' | 'style'): string[] {
  return [...html.matchAll(new RegExp(`<${tag}\\b[^>]*>([\\s\\S]*?)</${tag}>`, 'g'))].map((m) => m[1]!)
}

/** CSP directives by name: "script-src 'a' 'b'" -> { 'script-src': ["'a'", "'b'"] }. */
function directives(policy: string): Record<string, string[]> {
  return Object.fromEntries(
    policy.split(';').map((d) => {
      const [name, ...sources] = d.trim().split(/\s+/)
      return [name!, sources]
    }),
  )
}

describe('/-/dashboard on Node', () => {
  it('serves the built page with a CSP that allows only its own script and stylesheet, by hash', async () => {
    const server = await serve(app, { port: 0, handleSignals: false, name: 'dashboard-page-test' })
    try {
      const response = await fetch(`${server.url}/-/dashboard`)
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8')
      const html = await response.text()
      expect(html).toBe(dashboard.html)

      // One inline module script and one inline stylesheet, nothing fetched from anywhere.
      const scripts = contentsOf(html, 'script')
      const styles = contentsOf(html, 'style')
      expect(scripts).toHaveLength(1)
      expect(styles).toHaveLength(1)
      expect(html).not.toMatch(/<script\b[^>]*\bsrc=|<link\b[^>]*rel="stylesheet"/)
      expect(scripts[0]!.length).toBeGreaterThan(1000)

      const policy = directives(response.headers.get('content-security-policy')!)
      expect(policy['default-src']).toEqual(["'none'"])
      expect(policy['script-src']).toEqual([`'${sha256(scripts[0]!)}'`])
      expect(policy['style-src']).toEqual([`'${sha256(styles[0]!)}'`])
      expect(policy['connect-src']).toEqual(["'self'"])
      expect(response.headers.get('content-security-policy')).not.toContain('unsafe-inline')
    } finally {
      await server.close()
    }
  })

  it('answers 404 JSON when serve() is told dashboard: false, and the other routes still serve', async () => {
    const server = await serve(app, { port: 0, handleSignals: false, name: 'dashboard-off-test', dashboard: false })
    try {
      const response = await fetch(`${server.url}/-/dashboard`)
      expect(response.status).toBe(404)
      expect(await response.json()).toEqual({
        error: { type: 'HTTPError', message: expect.stringContaining("import { dashboard } from 'edgeserve/dashboard'") },
      })
      expect((await fetch(`${server.url}/-/healthz`)).status).toBe(200)
    } finally {
      await server.close()
    }
  })

  it('refuses a dashboard option that is not a page, naming what to pass', async () => {
    await expect(serve(app, { port: 0, handleSignals: false, dashboard: true as never })).rejects.toThrow(
      new TypeError(
        "serve: options.dashboard must be false (serve no dashboard) or the page from 'edgeserve/dashboard'; leave it out for the built-in one, received true",
      ),
    )
  })
})

/** A batched method with adaptive on (a fixed 3 ms a batch, so bigger batches serve more) beside one without. */
class Measured {
  adaptive = batch(
    async (xs: number[]) => {
      // At least 3 ms by the clock the queue times with: a 3 ms timer alone can fire after 2.1 ms
      // of performance.now() when the loop turn that set it was busy (libuv dates it from the turn's start).
      const started = performance.now()
      while (performance.now() - started < 3) await new Promise((resolve) => setTimeout(resolve, 1))
      return xs
    },
    { maxBatchSize: 16, adaptive: true },
  )
  fixed = batch(async (xs: number[]) => xs, { maxBatchSize: 4 })
  async fetch(request: Request) {
    const x = Number(new URL(request.url).searchParams.get('x'))
    return String((await this.adaptive(x)) + (await this.fixed(x)))
  }
}

describe('/-/routes: what the dashboard draws for an adaptive method', () => {
  it("reports an adaptive method's batch size limit (as its gauge does) and its measured cost, and nothing for a fixed one", { timeout: 30_000 }, async () => {
    const server = await serve(new Hono().get('/measured', ingress(deployment(Measured))), { port: 0, handleSignals: false, name: 'dashboard-adaptive-test' })
    try {
      type Routes = {
        deployments: {
          name: string
          adaptive: { replica: number; methods: Record<string, { batchSizeLimit: number; costCurve: { size: number; ms: number }[] }> } | null
        }[]
      }
      const measured = async () => ((await (await fetch(`${server.url}/-/routes`)).json()) as Routes).deployments.find((d) => d.name === 'Measured')!.adaptive!
      // Rounds of 64 calls at once, so that batches run back to back and the queue measures several sizes.
      // The curve holds only sizes measured twice since the last change it saw: on a loaded machine a
      // few slow batches mean a change, and the sizes are measured afresh. So rounds go on until two
      // sizes are known again, at most 40 of them.
      let described: Awaited<ReturnType<typeof measured>>
      for (let round = 1; ; round++) {
        const answers = await Promise.all(Array.from({ length: 64 }, (_, i) => fetch(`${server.url}/measured?x=${i}`).then((r) => r.text())))
        expect(answers).toEqual(Array.from({ length: 64 }, (_, i) => String(2 * i)))
        if (round < 10) continue
        described = await measured()
        if (described.methods.adaptive!.costCurve.length > 1 || round === 40) break
      }
      expect(described.replica).toBe(0)
      expect(Object.keys(described.methods)).toEqual(['adaptive'])
      const { batchSizeLimit, costCurve } = described.methods.adaptive!
      expect(batchSizeLimit).toBeGreaterThanOrEqual(1)
      expect(batchSizeLimit).toBeLessThanOrEqual(16)
      // Sizes of the ladder it measures, ascending, each with a time. A batch takes 3 ms at least, and
      // the curve gives a size the time of the batches filed under it scaled to that size: at worst
      // batches of 13 under 11, so 3 ms x 11/13 = 2.54 ms.
      expect(costCurve.length).toBeGreaterThan(1)
      expect(costCurve.map((p) => p.size)).toEqual([...new Set(costCurve.map((p) => p.size))].sort((a, b) => a - b))
      expect(costCurve.every((p) => [1, 2, 3, 4, 6, 8, 11, 16].includes(p.size) && p.ms >= 2.5)).toBe(true)

      const metrics = (await (await fetch(`${server.url}/-/metrics.json`)).json()) as {
        metrics: { name: string; samples: { labels: Record<string, string>; value: number }[] }[]
      }
      const gauge = metrics.metrics.find((f) => f.name === 'edgeserve_batch_size_limit')!
      const limitOf = (method: string) => gauge.samples.find((s) => s.labels.deployment === 'Measured' && s.labels.method === method)!.value
      expect(limitOf('adaptive')).toBe(batchSizeLimit)
      expect(limitOf('fixed')).toBe(4)
    } finally {
      await server.close()
    }
  })
})

describe('/-/dashboard through serveWorker()', () => {
  // The Worker's fetch runs here without Durable Objects: these requests reach no replica.
  const request = (path: string) => new Request(`http://worker.test${path}`)

  it('answers 404 JSON unless given the page, and serves it when given', async () => {
    const without = await serveWorker(app).fetch(request('/-/dashboard'), {}, undefined)
    expect(without.status).toBe(404)
    expect(await without.json()).toMatchObject({ error: { type: 'HTTPError', message: expect.stringContaining('serveWorker(app, { dashboard })') } })

    const withPage = await serveWorker(app, { dashboard }).fetch(request('/-/dashboard'), {}, undefined)
    expect(withPage.status).toBe(200)
    expect(await withPage.text()).toBe(dashboard.html)
  })

  it('refuses a dashboard option that is not a page, naming what to pass', () => {
    for (const [value, received] of [
      [true, 'true'],
      [{ html: '<p>' }, 'an object'],
      ['yes', '"yes"'],
    ] as const) {
      expect(() => serveWorker(app, { dashboard: value as never })).toThrow(
        new TypeError(
          `serveWorker: options.dashboard must be the page from 'edgeserve/dashboard' (import { dashboard } from 'edgeserve/dashboard'; serveWorker(app, { dashboard })), or left out to serve none, received ${received}`,
        ),
      )
    }
  })
})
