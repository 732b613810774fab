/**
 * A Worker isolate carries its concurrent requests and handle calls to one
 * replica in one call to its Durable Object (the isolate gathers, the object
 * batches), in real workerd served directly (bench/workerd-direct.ts), where
 * clients reach workerd's own socket, and the plain bursts also through
 * `wrangler dev`, whose proxy hands the Worker its requests another way.
 * Each item must come back as it would have alone: its status, headers and
 * body, its own error, its own 503 from an overloaded object, its own
 * stream. No waiting request may be lost to another's: not under sustained
 * load, and not when the client of the request that sent the call goes
 * away. The objects' `/-/metrics` (calls, and items per call) tell that the
 * calls were in fact gathered, and that `coalesceCalls: false` makes one
 * call per request.
 *
 * The deployments are test/workers/coalescing-app.ts's, with the test
 * Worker's adder, JSON doubler, text generator and overloaded object.
 */
import autocannon from 'autocannon'
import { describe, expect, it } from 'vitest'
import { RawConnection } from '../support/raw-connection.js'
import { burstHeader } from './burst-barrier.js'
import { waitFor } from '../support/wait-for.js'
import { workerdDirectForTests } from '../support/workerd-direct.js'
import { workerForTests } from '../support/workerd.js'

const direct = workerdDirectForTests()

/**
 * Calls into a deployment's objects, the items they carried, the calls that
 * carried one item, and those that carried none (claims and drops), over its
 * replicas.
 */
interface ObjectCalls {
  calls: number
  items: number
  single: number
  empty: number
}

/** `deployment`'s object calls now, from `/-/metrics` (edgeserve_object_call_items: _count, _sum, and the le="0" and le="1" buckets). */
async function objectCalls(base: string, deployment: string): Promise<ObjectCalls> {
  const text = await (await fetch(`${base}/-/metrics`)).text()
  const totals = { calls: 0, items: 0, single: 0, empty: 0 }
  const labels = `deployment="${deployment}",replica="`
  for (const line of text.split('\n')) {
    const value = Number(line.slice(line.lastIndexOf(' ') + 1))
    if (!line.includes(labels)) continue
    if (line.startsWith('edgeserve_object_call_items_count{')) totals.calls += value
    else if (line.startsWith('edgeserve_object_call_items_sum{')) totals.items += value
    else if (line.startsWith('edgeserve_object_call_items_bucket{') && line.includes(',le="1"}')) totals.single += value
    else if (line.startsWith('edgeserve_object_call_items_bucket{') && line.includes(',le="0"}')) totals.empty += value
  }
  // The le="1" bucket holds the empty calls too.
  return { ...totals, single: totals.single - totals.empty }
}

/** What `work` added to `deployment`'s object calls (nothing else may call its objects meanwhile). */
async function callsDuring<T>(base: string, deployment: string, work: () => Promise<T>): Promise<{ result: T; added: ObjectCalls }> {
  const before = await objectCalls(base, deployment)
  const result = await work()
  const after = await objectCalls(base, deployment)
  return {
    result,
    added: { calls: after.calls - before.calls, items: after.items - before.items, single: after.single - before.single, empty: after.empty - before.empty },
  }
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

async function send(base: string, c: Pick<Case, 'path' | 'init' | 'headers'>, burst?: Record<string, string>): Promise<Seen> {
  const response = await fetch(base + c.path, burst ? { ...c.init, headers: { ...(c.init?.headers as Record<string, string>), ...burst } } : c.init)
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

/**
 * Send `cases` at once, as one burst: the test Worker holds them until all
 * have reached its isolate (test/workers/burst-barrier.ts), so that they are
 * concurrent there however the loaded machine spaces their arrival.
 */
const sendBurst = (base: string, cases: Case[]) => {
  const burst = burstHeader(crypto.randomUUID(), cases.length)
  return Promise.all(cases.map((c) => send(base, c, burst)))
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
  ['workerd', () => direct.url],
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
      const seen = await sendBurst(baseOf(), cases)
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
      const { result: seen, added } = await callsDuring(baseOf(), 'GatheredItems', () => sendBurst(baseOf(), cases))
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
      (await (await fetch(`${direct.url}/coalescing/sum-runs?to=gathered&from=${from}`)).json()) as { size: number; refused: boolean }[]
    const runsBefore = (await sumRuns(0)).length
    const { result: seen, added } = await callsDuring(direct.url, 'GatheredItems', () => sendBurst(direct.url, to('gathered')))
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
    for (const c of to('alone')) alone.push(await send(direct.url, c))
    expect(alone).toEqual(seen)
  })
})

describe('Workers: the items of a carried call left over after its full batches', () => {
  it('run at once rather than after batchWaitTimeoutS, and come back in their call, not claimed one by one', async () => {
    // Ten calls of a method batching at most 4 that waits up to 10 s to fill a batch, carried in one
    // call: 4 and 4 run full, and the 2 left over must not wait 10 s for calls that are not coming.
    const { result, added } = await callsDuring(direct.url, 'TailItems', async () => {
      const response = await fetch(`${direct.url}/coalescing/tail?n=10`, { signal: AbortSignal.timeout(5_000) })
      return (await response.json()) as { doubled: number[]; runs: number[] }
    })
    expect(result).toEqual({ doubled: Array.from({ length: 10 }, (_, i) => 2 * i), runs: [4, 4, 2] })
    // The batch sizes read before and after, one item each, and the ten in one call; no claim.
    expect(added).toEqual({ calls: 3, items: 12, single: 2, empty: 0 })
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
    const { result: seen, added } = await callsDuring(direct.url, 'AloneItems', () => sendBurst(direct.url, cases))
    expect(seen).toEqual(cases.map(expected))
    expect(added).toEqual({ calls: 24, items: 24, single: 24, empty: 0 })
  })

  it('makes one object call per handle call too', async () => {
    const { result, added } = await callsDuring(direct.url, 'AloneItems', () => handleCalls(direct.url, 'alone'))
    expect(result).toEqual({ squares: [0, 1, 4, 9, 16, 25, 36, 49], labels: Array.from({ length: 8 }, (_, i) => `item ${i}`) })
    expect(added).toEqual({ calls: 16, items: 16, single: 16, empty: 0 })
  })
})

describe('Workers: no waiting request lost under sustained load', () => {
  it('answers every GET of 8 s of load at concurrency 64 with 200 and its own body, with no retries', async () => {
    const LOAD_MS = 8000
    const answers: { id: number; status: number; body: string }[] = []
    let next = 0
    const { added } = await callsDuring(direct.url, 'GatheredItems', async () => {
      const until = Date.now() + LOAD_MS
      const client = async () => {
        while (Date.now() < until) {
          const id = next++
          try {
            // Bounded: a request cancelled as hung, or never continued, fails here rather than at the test's timeout.
            const response = await fetch(`${direct.url}/coalescing/gathered?id=${id}`, { signal: AbortSignal.timeout(8000) })
            answers.push({ id, status: response.status, body: await response.text() })
          } catch (error) {
            answers.push({ id, status: 0, body: String(error) })
          }
        }
      }
      await Promise.all(Array.from({ length: 64 }, client))
    })
    const wrong = answers.filter((a) => a.status !== 200 || a.body !== JSON.stringify({ id: a.id, squared: a.id * a.id }))
    expect(wrong.slice(0, 5), `${wrong.length} of ${answers.length} answers wrong`).toEqual([])
    expect(answers).toHaveLength(next)
    expect(added.items).toBe(next)
    // Under load the calls carried many items each.
    expect(added.items / added.calls, JSON.stringify(added)).toBeGreaterThan(2)
  })
})

describe('Workers: no request lost while it waits in the router', () => {
  it('answers each of 20,000 POSTs at concurrency 64, to a deployment with room for 8 at a time, with 200', async () => {
    // 56 of the 64 wait in the Worker's router for a replica slot at any time, each continued by the
    // request that frees one, then reading its own body. Its promise made with new Promise() rather
    // than Promise.withResolvers(), workerd continued such a waiter in the freeing request once V8
    // had optimized the router, after about 15,000 requests here: each then failed 500 ("Cannot
    // perform I/O on behalf of a different request"). So the load is counted in requests, not seconds.
    const result = await new Promise<autocannon.Result>((resolve, reject) => {
      autocannon(
        {
          url: `${direct.url}/coalescing/queued?id=7`,
          connections: 64,
          amount: 20_000,
          method: 'POST',
          body: JSON.stringify({ row: [7, 1] }),
          headers: { 'content-type': 'application/json' },
        },
        (error, done) => (error ? reject(error) : resolve(done)),
      )
    })
    expect({ answered: result.requests.total, non2xx: result.non2xx, errors: result.errors, timeouts: result.timeouts }).toEqual({
      answered: 20_000,
      non2xx: 0,
      errors: 0,
      timeouts: 0,
    })
    // And after it, a request is answered with its own body.
    expect(await send(direct.url, { path: '/coalescing/queued?id=3', init: json({ row: [3, 1] }) })).toMatchObject({ status: 200, body: { id: 3, sum: 4 } })
    // A budget for a load counted in requests: 20,000 took 20 s here; a minute allows 330 a second.
  }, 60_000)
})

describe('Workers: the client of the request that sent a carried call goes away', () => {
  it("loses none of the other requests' answers of that call; its own item leaves the object, and the next request is answered", async () => {
    const ROUND = 1
    const N = 6
    const heldState = async () => (await (await fetch(`${direct.url}/coalescing/held/carried`)).json()) as { carried: number[][]; left: number[] }
    const connections = await Promise.all(Array.from({ length: N }, () => RawConnection.open(direct.url)))
    // One burst, so that the isolate takes them in one turn and carries them in one call.
    const [burst, size] = Object.entries(burstHeader(crypto.randomUUID(), N))[0]!
    await Promise.all(
      connections.map((connection, id) =>
        connection.send(`GET /coalescing/held?id=${id}&round=${ROUND} HTTP/1.1\r\nhost: edgeserve.test\r\n${burst}: ${size}\r\n\r\n`),
      ),
    )
    await waitFor(async () => (await heldState()).carried.flat().length === N, 'every held request to reach the object')

    const { carried } = await heldState()
    // The first item of a call is the one of the request that sent it.
    const shared = carried.find((call) => call.length > 1)
    expect(shared, `no call carried more than one request: ${JSON.stringify(carried)}`).toBeDefined()
    const sender = shared![0]!
    connections[sender]!.reset()
    // Its item leaves the object: its signal there aborts. Waited for, then released either way, to see the others' answers.
    const leftInTime = await waitFor(async () => (await heldState()).left.includes(sender), "the sender's item to leave the object").then(
      () => true,
      (error: Error) => error.message,
    )

    await fetch(`${direct.url}/coalescing/held/release?round=${ROUND}`, { method: 'POST' })
    const others = connections.map((_, id) => id).filter((id) => id !== sender)
    const answers = await Promise.all(
      others.map(async (id) => connections[id]!.next(5000).catch((error: Error) => ({ status: 0, body: JSON.stringify(error.message) }))),
    )
    expect(answers.map((a) => [a.status, parsed(a.body)])).toEqual(others.map((id) => [200, { id, round: ROUND }]))
    expect(leftInTime).toBe(true)
    expect((await heldState()).left).toEqual([sender])

    // The next request, on a fresh connection, is answered.
    const fresh = await RawConnection.open(direct.url)
    await fresh.send('GET /coalescing/held?id=99 HTTP/1.1\r\nhost: edgeserve.test\r\n\r\n')
    const answer = await fresh.next()
    expect([answer.status, parsed(answer.body)]).toEqual([200, { id: 99, round: 0 }])
    for (const connection of [...connections, fresh]) connection.close()
  })
})

describe('Workers: an overloaded object refuses a carried call', () => {
  async function expectOverloaded(response: Response) {
    expect(response.status).toBe(503)
    expect(response.headers.get('retry-after')).toBe('1')
    expect(await response.json()).toEqual({
      error: { type: 'ReplicaOverloadedError', message: expect.stringContaining(`is overloaded and refused this`) },
    })
  }

  it('answers each GET and POST of a concurrent burst 503 with Retry-After and the JSON error, in fewer refused calls than requests', async () => {
    const refused = async () => (await (await fetch(`${direct.url}/overloaded/alone/refused`)).json()) as number
    const before = await refused()
    const burst = burstHeader(crypto.randomUUID(), 16)
    const responses = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        fetch(
          `${direct.url}/overloaded/alone`,
          i % 4 === 3 ? { method: 'POST', body: `post ${i}`, headers: { 'content-type': 'text/plain', ...burst } } : { headers: burst },
        ),
      ),
    )
    for (const response of responses) await expectOverloaded(response)
    const calls = (await refused()) - before
    expect(calls).toBeGreaterThan(0)
    expect(calls).toBeLessThan(16)
  })
})

describe('Workers: streamed answers of carried requests', () => {
  /** An SSE answer's tokens, and how long passed between its first and last. */
  async function readStream(response: Response): Promise<{ tokens: string[]; spreadMs: number }> {
    const reader = response.body!.getReader()
    const decoder = new TextDecoder()
    const tokens: string[] = []
    let buffered = ''
    let first = 0
    let last = 0
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      buffered += decoder.decode(value, { stream: true })
      let end: number
      while ((end = buffered.indexOf('\n\n')) >= 0) {
        const event = buffered.slice(0, end)
        buffered = buffered.slice(end + 2)
        if (event.startsWith('event: end')) continue
        tokens.push(JSON.parse(event.replace(/^data: /, '')) as string)
        last = Date.now()
        first ||= last
      }
    }
    return { tokens, spreadMs: last - first }
  }

  it('streams SSE answers requested with whole ones in one burst: each the tokens it gets alone, as they come', async () => {
    const PROMPTS = ['Once upon a time', 'Alice', 'The Wolf said', 'It was']
    const TOKENS = 96
    const generate = (text: string) => `/generate?text=${encodeURIComponent(text)}&maxTokens=${TOKENS}`
    // What each prompt gets alone, whole.
    const alone: string[] = []
    for (const text of PROMPTS) alone.push(await (await fetch(direct.url + generate(text))).text())

    const { result, added } = await callsDuring(direct.url, 'BatchTextGenerator', async () => {
      const headers = burstHeader(crypto.randomUUID(), 2 * PROMPTS.length)
      const streams = PROMPTS.map(async (text) => {
        const response = await fetch(`${direct.url}/generate/stream?text=${encodeURIComponent(text)}&maxTokens=${TOKENS}`, { headers })
        return { contentType: response.headers.get('content-type'), ...(await readStream(response)) }
      })
      const whole = PROMPTS.map(async (text) => (await fetch(direct.url + generate(text), { headers })).text())
      return { streams: await Promise.all(streams), whole: await Promise.all(whole) }
    })
    expect(result.whole).toEqual(alone)
    for (const [i, stream] of result.streams.entries()) {
      expect(stream.contentType).toMatch(/^text\/event-stream/)
      expect(stream.tokens.join('')).toBe(alone[i])
      // Paced 3 ms a step, 96 tokens take at least a quarter of a second: read whole and passed on, they would come at once.
      expect(stream.spreadMs, `stream ${i}`).toBeGreaterThan(100)
    }
    expect(added.items).toBe(8)
    // Each stream was claimed by its own request, with a call of its own that carried no item, and counted as a call.
    expect(added.empty, JSON.stringify(added)).toBeGreaterThanOrEqual(4)
    // The items themselves went in fewer calls than one each.
    expect(added.calls - added.empty, JSON.stringify(added)).toBeLessThan(8)
  })
})
