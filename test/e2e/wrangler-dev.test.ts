/** `npm run dev`'s server, for real: wrangler dev on a loopback port serving the demo app. */
import { stripVTControlCharacters } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RawConnection } from '../support/raw-connection.js'
import { startWranglerDev, type WranglerDev } from '../support/wrangler-dev.js'

let dev: WranglerDev

beforeAll(async () => {
  dev = await startWranglerDev()
}, 90_000)

afterAll(async () => {
  await dev?.stop()
})

describe('the demo app under wrangler dev', () => {
  it("answers the Ray Serve tutorials' queries through the Durable Object", async () => {
    const results = await Promise.all(Array.from({ length: 9 }, (_, i) => fetch(`${dev.url}/adder?number=${i}`).then((r) => r.text())))
    expect(results.map(Number)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9])
    // The object's log reaches us through workerd's pipe and then wrangler's, possibly after the answers.
    expect(await dev.waitForOutput(/Our input array has shape: \(\d+,\)/)).toMatch(/Our input array has shape: \(\d+,\)/)
  })

  it('serves the autoscaled adder: its coordinator object starts a replica for the first request', async () => {
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => fetch(`${dev.url}/adder/autoscaled?number=${i}`).then((r) => r.text())))
    expect(answers.map(Number)).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
    const routes = (await (await fetch(`${dev.url}/-/routes`)).json()) as {
      deployments: { name: string; replicas: number; options: { numReplicas: unknown } }[]
    }
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

  it("answers a client's bad body with a JSON 4xx on one kept-alive connection, the next request answered, and nothing logged as an error", async () => {
    const connection = await RawConnection.open(dev.url)
    const post = async (path: string, type: string, body: number | Uint8Array, extra = '') => {
      const size = typeof body === 'number' ? body : body.byteLength
      const sending = connection.send(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${type}\r\nContent-Length: ${size}\r\n${extra}\r\n`, body)
      const answer = await connection.next(30_000)
      await sending
      return [answer.status, (JSON.parse(answer.body) as { error: { type: string } }).error.type]
    }
    const adder = async (n: number) => {
      await connection.write(`GET /adder?number=${n} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`)
      return (await connection.next()).body
    }
    try {
      // A JSON body that does not parse, read in the Durable Object (readJson; the docs' Workers example reads request.json()).
      expect(await post('/predict', 'application/json', Buffer.from('{"features": [1, 2'))).toEqual([400, 'HTTPError'])
      expect(await adder(1)).toBe('2')
      // Past readJson()'s 16 KiB limit: refused on its Content-Length, before the object reads it.
      expect(await post('/regional/predict', 'application/json', 1024 * 1024, 'edgeserve-multiplexed-model-id: north\r\n')).toEqual([413, 'HTTPError'])
      expect(await adder(2)).toBe('3')
      // A type the object refuses before reading, from a small body to a large one.
      for (const size of [10, 64 * 1024 + 1, 4 * 1024 * 1024]) {
        expect(await post('/ocr/direction', 'text/plain', size)).toEqual([415, 'HTTPError'])
        expect(await adder(size)).toBe(String(size + 1))
      }
    } finally {
      connection.close()
    }
    // workerd logs "✘ [ERROR] Uncaught Error: Network connection lost." when its pump of a body into an object breaks.
    const lines = stripVTControlCharacters(dev.output()).split('\n')
    expect(lines.filter((line) => /\[ERROR\]|Uncaught|Network connection lost/.test(line))).toEqual([])
  })

  it('refuses a small body still arriving (a 404 in the Worker, a 415 in a Durable Object), and the connection serves the next request', async () => {
    // Small bodies go to the app as they came: the object must read the rest before its early answer,
    // or workerd ends the connection when the client writes it.
    const connection = await RawConnection.open(dev.url)
    const size = 60 * 1024
    try {
      for (const [path, status] of [
        ['/no-such-route', 404],
        ['/ocr/direction', 415],
      ] as const) {
        await connection.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: ${size}\r\n\r\n`)
        await connection.write(new Uint8Array(1000))
        const answer = connection.next(30_000)
        // Time for an answer that did not wait for the rest.
        await new Promise((resolve) => setTimeout(resolve, 300))
        await connection.write(new Uint8Array(size - 1000))
        expect((await answer).status).toBe(status)
        await connection.write(`GET /adder?number=${status} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`)
        expect((await connection.next()).body).toBe(String(status + 1))
      }
    } finally {
      connection.close()
    }
  })
})
