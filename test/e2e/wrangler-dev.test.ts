/** `npm run dev`'s server, for real: wrangler dev on a loopback port serving the demo app. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startWranglerDev, type WranglerDev } from '../support/wrangler-dev.js'

let dev: WranglerDev

beforeAll(async () => {
  dev = await startWranglerDev()
}, 90_000)

afterAll(async () => {
  await dev?.stop()
})

describe('the demo app under wrangler dev', () => {
  it('answers the seed queries through the Durable Object', async () => {
    const results = await Promise.all(
      Array.from({ length: 9 }, (_, i) => fetch(`${dev.url}/adder?number=${i}`).then((r) => r.text())),
    )
    expect(results.map(Number)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9])
    // The object's log reaches us through workerd's pipe and then wrangler's, possibly after the answers.
    expect(await dev.waitForOutput(/Our input array has shape: \(\d+,\)/)).toMatch(/Our input array has shape: \(\d+,\)/)
  })

  it('serves the autoscaled adder: its coordinator object starts a replica for the first request', async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => fetch(`${dev.url}/adder/autoscaled?number=${i}`).then((r) => r.text())))
    expect(answers.map(Number)).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
    const routes = (await (await fetch(`${dev.url}/-/routes`)).json()) as { deployments: { name: string; replicas: number; options: { numReplicas: unknown } }[] }
    const scaled = routes.deployments.find((d) => d.name === 'ScaledAdder')!
    expect(scaled.options.numReplicas).toBe('auto')
    expect(scaled.replicas).toBeGreaterThanOrEqual(1)
    // wrangler dev keeps storage between runs: the coordinator may come back with a stored count and fresh
    // counters (as any restarted process's counters), so the counters are checked for presence, the gauge for value.
    const metrics = await (await fetch(`${dev.url}/-/metrics`)).text()
    expect(metrics).toMatch(/^edgeserve_replicas\{deployment="ScaledAdder"\} [1-4]$/m)
    expect(metrics).toMatch(/^edgeserve_replica_starts_total\{deployment="ScaledAdder"\} \d+$/m)
    expect(metrics).toMatch(/^edgeserve_replica_stops_total\{deployment="ScaledAdder"\} \d+$/m)
  })

  it('answers bad input with a 400 JSON error', async () => {
    const response = await fetch(`${dev.url}/adder?number=NaN`)
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({ error: { type: 'HTTPError' } })
  })

  it('serves handles and the operational routes', async () => {
    expect(await (await fetch(`${dev.url}/adder-origin/handle?number=1`)).text()).toBe('2')
    const health = await fetch(`${dev.url}/-/healthz`)
    expect(health.status).toBe(200)
    // workerd evicts a Durable Object idle for 10 s, and its counters with it: on a busy machine the
    // health check above can take that long, so the adder serves a batch again right before the read.
    expect(await (await fetch(`${dev.url}/adder?number=41`)).text()).toBe('42')
    const metrics = await (await fetch(`${dev.url}/-/metrics`)).text()
    expect(metrics).toContain('edgeserve_batch_size_bucket{deployment="BatchAdder"')
    const routes = (await (await fetch(`${dev.url}/-/routes`)).json()) as { routes: { path: string; deployment: string }[] }
    expect(routes.routes).toContainEqual({ method: 'GET', path: '/adder', deployment: 'BatchAdder' })
    // The demo Worker passes the page to serveWorker(): served with its CSP, as on Node.
    const dashboard = await fetch(`${dev.url}/-/dashboard`)
    expect(dashboard.status).toBe(200)
    expect(dashboard.headers.get('content-type')).toMatch(/^text\/html/)
    expect(dashboard.headers.get('content-security-policy')).toMatch(/script-src 'sha256-/)
    expect(await dashboard.text()).toContain('edgeserve')
  })
})
