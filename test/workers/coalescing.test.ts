/**
 * A Worker isolate carries its concurrent requests and handle calls to one
 * replica in one call to its Durable Object (the isolate gathers, the object
 * batches), in real workerd served directly (bench/workerd-direct.ts), and
 * the plain bursts also through `wrangler dev`, whose proxy hands the Worker
 * its requests another way. Each item must come back as it would have alone:
 * its status, headers and body, its own error. The objects' `/-/metrics`
 * (calls, and items per call) tell that the calls were in fact gathered, and
 * that `coalesceCalls: false` makes one call per request.
 *
 * The deployments are test/workers/coalescing-app.ts's, with the test
 * Worker's adder and JSON doubler.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startInGroup, type GroupChild } from '../support/process-group.js'
import { workerForTests } from '../support/workerd.js'

let server: GroupChild
let url: string

beforeAll(async () => {
  server = await startInGroup(
    [process.execPath, 'node_modules/tsx/dist/cli.mjs', 'bench/workerd-direct.ts', 'test/workers/wrangler.toml'],
    /READY (http:\/\/\S+)/,
  )
  url = server.match[1]!
})

afterAll(async () => {
  await server?.stop()
})

/** Calls into a deployment's objects, the items they carried, and the calls that carried one item, over its replicas. */
interface ObjectCalls {
  calls: number
  items: number
  single: number
}

/** `deployment`'s object calls now, from `/-/metrics` (edgeserve_object_call_items: _count, _sum, and the le="1" bucket). */
async function objectCalls(base: string, deployment: string): Promise<ObjectCalls> {
  const text = await (await fetch(`${base}/-/metrics`)).text()
  const totals = { calls: 0, items: 0, single: 0 }
  const labels = `deployment="${deployment}",replica="`
  for (const line of text.split('\n')) {
    const value = Number(line.slice(line.lastIndexOf(' ') + 1))
    if (!line.includes(labels)) continue
    if (line.startsWith('edgeserve_object_call_items_count{')) totals.calls += value
    else if (line.startsWith('edgeserve_object_call_items_sum{')) totals.items += value
    else if (line.startsWith('edgeserve_object_call_items_bucket{') && line.includes(',le="1"}')) totals.single += value
  }
  return totals
}

/** What `work` added to `deployment`'s object calls (nothing else may call its objects meanwhile). */
async function callsDuring<T>(base: string, deployment: string, work: () => Promise<T>): Promise<{ result: T; added: ObjectCalls }> {
  const before = await objectCalls(base, deployment)
  const result = await work()
  const after = await objectCalls(base, deployment)
  return { result, added: { calls: after.calls - before.calls, items: after.items - before.items, single: after.single - before.single } }
}

/** One request of a burst, and what it must be answered with. */
interface Case {
  path: string
  init?: RequestInit
  status: number
  contentType: string
  /** The body parsed as JSON, or the text where it is not JSON. */
  body: unknown
  headers?: Record<string, string>
}

/** An answer as a test compares it: status, content type, the headers a case names, and the body. */
interface Seen {
  status: number
  contentType: string | null
  headers: Record<string, string | null>
  body: unknown
}

async function send(base: string, c: Pick<Case, 'path' | 'init' | 'headers'>): Promise<Seen> {
  const response = await fetch(base + c.path, c.init)
  const text = await response.text()
  const contentType = response.headers.get('content-type')
  const headers = Object.fromEntries(Object.keys(c.headers ?? {}).map((name) => [name, response.headers.get(name)]))
  return { status: response.status, contentType, headers, body: contentType?.includes('json') ? parsed(text) : text }
}

/** A body as JSON where it is, else its text: a failure shows as what it said. */
function parsed(body: string): unknown {
  try {
    return JSON.parse(body)
  } catch {
    return body
  }
}

const expected = (c: Case): Seen => ({ status: c.status, contentType: c.contentType, headers: c.headers ?? {}, body: c.body })

const json = (body: unknown): RequestInit => ({ method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } })

/** What eight handle calls of each method, made at once from one Worker request, answered. */
const handleCalls = async (base: string, to: 'gathered' | 'alone') =>
  (await (await fetch(`${base}/coalescing/calls?n=8&to=${to}`)).json()) as { squares: number[]; labels: string[] }

/** Statuses a deployment's own Response may answer with (each may carry a body). */
const STATUSES = [200, 201, 202, 203, 404, 409]

/** The same Worker under `wrangler dev` (Miniflare and its proxy in front), for the tests that run both ways. */
const viaWrangler = workerForTests(new URL('./wrangler.toml', import.meta.url))

for (const [runtime, baseOf] of [
  ['workerd', () => url],
  ['wrangler dev', () => viaWrangler.url],
] as const) {
  describe(`Workers: concurrent calls carried to an object together, ${runtime}`, () => {
    it('answers each of 48 concurrent GETs and POSTs, to three deployments, with its own status, headers and body, in fewer object calls than requests', async () => {
      const cases: Case[] = Array.from({ length: 48 }, (_, i): Case => {
        switch (i % 4) {
          case 0: {
            const status = STATUSES[(i / 4) % STATUSES.length]!
            const body = { id: i, squared: i * i }
            return {
              path: `/coalescing/gathered?id=${i}&status=${status}`,
              status,
              contentType: 'application/json; charset=utf-8',
              body,
              headers: { 'x-item': String(i) },
            }
          }
          case 1:
            return {
              path: `/coalescing/gathered?id=${i}`,
              init: json({ row: [i, 0.5] }),
              status: 200,
              contentType: 'application/json',
              body: { id: i, sum: i + 0.5 },
            }
          case 2:
            return { path: '/double', init: json({ x: i }), status: 200, contentType: 'application/json', body: { doubled: 2 * i } }
          default:
            return { path: `/adder?number=${i}`, status: 200, contentType: 'text/plain; charset=utf-8', body: String(i + 1) }
        }
      })
      const deployments = ['GatheredItems', 'JsonDoubler', 'SeedAdder']
      const before = await Promise.all(deployments.map((d) => objectCalls(baseOf(), d)))
      const seen = await Promise.all(cases.map((c) => send(baseOf(), c)))
      const after = await Promise.all(deployments.map((d) => objectCalls(baseOf(), d)))

      expect(seen).toEqual(cases.map(expected))
      // Every request reached its object once, and most shared a call: GatheredItems took 24, the others 12 each.
      const added = after.map((a, i) => ({ calls: a.calls - before[i]!.calls, items: a.items - before[i]!.items }))
      expect(added.map((a) => a.items)).toEqual([24, 12, 12])
      for (const { calls, items } of added) expect(calls, JSON.stringify(added)).toBeLessThan(items)
    })

    it('answers a POST whose body is past the carried size in a call of its own, beside carried ones', async () => {
      const padding = 'x'.repeat(100 * 1024)
      const cases: Case[] = Array.from({ length: 12 }, (_, i) => ({
        path: `/coalescing/gathered?id=${i}`,
        init: json(i === 5 ? { row: [i, 2], padding } : { row: [i, 1] }),
        status: 200,
        contentType: 'application/json',
        body: { id: i, sum: i + (i === 5 ? 2 : 1) },
      }))
      const { result: seen, added } = await callsDuring(baseOf(), 'GatheredItems', () => Promise.all(cases.map((c) => send(baseOf(), c))))
      expect(seen).toEqual(cases.map(expected))
      expect(added.items).toBe(12)
      // The large one came alone; the rest shared calls.
      expect(added.single).toBeGreaterThanOrEqual(1)
      expect(added.calls).toBeLessThan(12)
    })

    it('answers several handle calls of one Worker request, batched and unbatched methods, each with its own value, in fewer object calls', async () => {
      const { result, added } = await callsDuring(baseOf(), 'GatheredItems', () => handleCalls(baseOf(), 'gathered'))
      expect(result).toEqual({ squares: [0, 1, 4, 9, 16, 25, 36, 49], labels: Array.from({ length: 8 }, (_, i) => `item ${i}`) })
      expect(added.items).toBe(16)
      expect(added.calls).toBeLessThan(16)
    })
  })
}

describe('Workers: errors of carried items, each its own', () => {
  /** Good items, and one of each failure, as today's statuses answer them. */
  const errorCases = (): Case[] => {
    const good = (i: number): Case =>
      i % 2 === 0
        ? {
            path: `/coalescing/ITEMS?id=${i}`,
            status: 200,
            contentType: 'application/json; charset=utf-8',
            body: { id: i, squared: i * i },
            headers: { 'x-item': String(i) },
          }
        : { path: `/coalescing/ITEMS?id=${i}`, init: json({ row: [i, i] }), status: 200, contentType: 'application/json', body: { id: i, sum: 2 * i } }
    const failed = (status: number, type: string, message: string) => ({
      status,
      contentType: 'application/json; charset=utf-8',
      body: { error: { type, message } },
    })
    return [
      ...[0, 1, 2, 3, 4].map(good),
      // A malformed item: stack() refuses a row of one value, for that item alone.
      { path: '/coalescing/ITEMS?id=5', init: json({ row: [5] }), ...failed(422, 'HTTPError', 'item has 1 values, but shape [2] needs 2') },
      ...[6, 7, 8].map(good),
      {
        path: '/coalescing/ITEMS?id=9',
        init: { method: 'POST', body: '{"row": [9,', headers: { 'content-type': 'application/json' } },
        ...failed(400, 'HTTPError', 'the request body is not valid JSON'),
      },
      ...[10, 11].map(good),
      // Past requestTimeoutS (2 s): the deadline the item carried, kept in the object.
      { path: '/coalescing/ITEMS?id=12&waitMs=3000', ...failed(504, 'RequestTimeoutError', 'the request timed out before its result was ready') },
      { path: '/coalescing/ITEMS?id=13&fail=418', ...failed(418, 'HTTPError', 'item 13 failed with 418') },
      { path: '/coalescing/ITEMS?id=14&fail=plain', ...failed(500, 'InternalServerError', 'an internal error occurred while handling this request') },
      ...[15, 16, 17].map(good),
    ]
  }
  const to = (deployment: 'gathered' | 'alone') => errorCases().map((c) => ({ ...c, path: c.path.replace('ITEMS', deployment) }))

  it('answers a malformed item 422, a body not JSON 400, a deadline 504, a thrown error its status, in one burst, the rest 200: as each is answered alone', async () => {
    const sumRuns = async (from: number) =>
      (await (await fetch(`${url}/coalescing/sum-runs?to=gathered&from=${from}`)).json()) as { size: number; refused: boolean }[]
    const runsBefore = (await sumRuns(0)).length
    const { result: seen, added } = await callsDuring(url, 'GatheredItems', () => Promise.all(to('gathered').map((c) => send(url, c))))
    expect(seen).toEqual(to('gathered').map(expected))
    expect(added.items).toBe(18)
    expect(added.calls, JSON.stringify(added)).toBeLessThan(18)
    // The malformed item shared a batch with good ones, which ran again without it: the case this is about.
    const runs = await sumRuns(runsBefore)
    const refused = runs.findIndex((run) => run.refused)
    expect(runs[refused]?.size, JSON.stringify(runs)).toBeGreaterThan(1)
    expect(runs[refused + 1], JSON.stringify(runs)).toEqual({ size: runs[refused]!.size - 1, refused: false })

    // The same requests, each alone, to the same class deployed with one call per request: the same answers.
    const alone: Seen[] = []
    for (const c of to('alone')) alone.push(await send(url, c))
    expect(alone).toEqual(seen)
  })
})

describe('Workers: coalesceCalls: false', () => {
  it('makes one object call per request under the same concurrent burst, each answered with its own body', async () => {
    const cases: Case[] = Array.from({ length: 24 }, (_, i) =>
      i % 2 === 0
        ? {
            path: `/coalescing/alone?id=${i}`,
            status: 200,
            contentType: 'application/json; charset=utf-8',
            body: { id: i, squared: i * i },
            headers: { 'x-item': String(i) },
          }
        : { path: `/coalescing/alone?id=${i}`, init: json({ row: [i, 1] }), status: 200, contentType: 'application/json', body: { id: i, sum: i + 1 } },
    )
    const { result: seen, added } = await callsDuring(url, 'AloneItems', () => Promise.all(cases.map((c) => send(url, c))))
    expect(seen).toEqual(cases.map(expected))
    expect(added).toEqual({ calls: 24, items: 24, single: 24 })
  })

  it('makes one object call per handle call too', async () => {
    const { result, added } = await callsDuring(url, 'AloneItems', () => handleCalls(url, 'alone'))
    expect(result).toEqual({ squares: [0, 1, 4, 9, 16, 25, 36, 49], labels: Array.from({ length: 8 }, (_, i) => `item ${i}`) })
    expect(added).toEqual({ calls: 16, items: 16, single: 16 })
  })
})
