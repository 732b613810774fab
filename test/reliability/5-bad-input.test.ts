/**
 * Bad input: thousands of malformed requests, generated from a seed, across
 * every route of the demo app on Node, with good requests interleaved. Every
 * malformed one must get a 4xx JSON error `{ error: { type, message } }`;
 * every good one its right answer; the server stays up and healthy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FEATURE_RANGES, FEATURE_NAMES } from '../../examples/house-price/features.js'
import { HousePricePredictor } from '../../examples/house-price/predictor.js'
import { BatchTextGenerator } from '../../examples/text-generator/generator.js'
import { errorOf, isJson, keepAliveAgent, pool, request, type Answer, type RequestSpec } from './lib/http.js'
import { ocrFixtures } from './lib/images.js'
import { rawExchange } from './lib/raw.js'
import { badCase, type BadCase } from './lib/malformed.js'
import { Prng } from './lib/prng.js'
import { gauges, sleep } from './lib/proc.js'
import { Recorder } from './lib/record.js'
import { startNode, type NodeServer } from './lib/servers.js'

/** Replay a failure with RELIABILITY_SEED=<seed>. */
const SEED = Number(process.env.RELIABILITY_SEED ?? 20_240_187)
const BAD = 5_200
const GOOD_EVERY = 8
const CONCURRENCY = 32

const recorder = new Recorder(
  '5-bad-input',
  `Bad input: ${BAD.toLocaleString('en')} malformed requests across every demo route (seed ${SEED}), good ones interleaved`,
)
let server: NodeServer
const agent = keepAliveAgent(CONCURRENCY)
const fixtures = ocrFixtures()

beforeAll(async () => {
  server = await startNode(['examples/demo/app.ts'])
})
afterAll(async () => {
  agent.destroy()
  await server?.stop()
  recorder.save()
})

interface GoodCase {
  route: string
  spec: RequestSpec
  check(answer: Answer): string | undefined
}

const PROMPTS = ['Once upon a time', 'The quick brown fox', 'hello', 'It was a dark and stormy night', 'A', '12345', 'Zebra crossing!']

async function goodCases(prng: Prng, count: number): Promise<GoodCase[]> {
  const kinds = Array.from({ length: count }, () => prng.int(0, 9))
  // Direct predictions, outside any server, for every good /predict.
  const rows = kinds
    .filter((k) => k === 3 || k === 4)
    .map(() =>
      FEATURE_NAMES.map((name) => {
        const [min, max] = FEATURE_RANGES[name]
        return Math.round((min + prng.next() * (max - min)) * 1000) / 1000
      }),
    )
  const prices = rows.length > 0 ? await new HousePricePredictor().predict(rows) : []
  // Direct continuations, for every prompt used.
  const generator = new BatchTextGenerator()
  const continuations = new Map<string, string>()
  for (const prompt of PROMPTS) continuations.set(prompt, await generator.handleBatch(prompt, 8))
  let row = 0
  return kinds.map((kind): GoodCase => {
    if (kind <= 2) {
      const route = prng.pick(['/adder', '/adder-origin', '/adder-origin/handle'])
      const n = prng.int(-1e12, 1e12)
      return { route, spec: { path: `${route}?number=${n}` }, check: (a) => (a.status === 200 && a.text === String(n + 1) ? undefined : `expected ${n + 1}`) }
    }
    if (kind <= 4) {
      const features = rows[row]!
      const expected = prices[row++]!
      return {
        route: '/predict',
        spec: { method: 'POST', path: '/predict', body: JSON.stringify({ features }), headers: { 'content-type': 'application/json' } },
        check: (a) => {
          const got = a.status === 200 ? (JSON.parse(a.text) as { prediction: number }).prediction : NaN
          return Math.abs(got - expected) <= 1e-4 * Math.max(1, Math.abs(expected)) ? undefined : `expected a prediction of ${expected}`
        },
      }
    }
    if (kind <= 6) {
      const prompt = prng.pick(PROMPTS)
      const expected = continuations.get(prompt)!
      const stream = kind === 6
      return {
        route: stream ? '/generate/stream' : '/generate',
        spec: { path: `${stream ? '/generate/stream' : '/generate'}?text=${encodeURIComponent(prompt)}&maxTokens=8` },
        check: (a) => {
          if (a.status !== 200) return 'expected 200'
          const text = stream
            ? [...a.text.matchAll(/^data: (.*)$/gm)]
                .map((m) => JSON.parse(m[1]!) as unknown)
                .filter((t): t is string => typeof t === 'string')
                .join('')
            : a.text
          return text === expected && (!stream || a.text.includes('event: end')) ? undefined : `expected ${JSON.stringify(expected)}`
        },
      }
    }
    const fixture = prng.pick(fixtures)
    return {
      route: '/ocr/direction',
      spec: { method: 'POST', path: '/ocr/direction', body: fixture.bytes, headers: { 'content-type': fixture.type } },
      check: (a) =>
        a.status === 200 && (JSON.parse(a.text) as { angle: number }).angle === fixture.angle
          ? undefined
          : `expected angle ${fixture.angle} for ${fixture.file}`,
    }
  })
}

describe('bad input on Node', () => {
  it(`${BAD} malformed requests get only 4xx JSON errors; the good ones interleaved all get their right answers`, async () => {
    const prng = new Prng(SEED)
    const bad: BadCase[] = Array.from({ length: BAD }, () => badCase(prng, fixtures))
    const good = await goodCases(prng, Math.ceil(BAD / GOOD_EVERY))
    const all: ({ bad: BadCase } | { good: GoodCase })[] = []
    bad.forEach((b, i) => {
      all.push({ bad: b })
      if (i % GOOD_EVERY === 0) all.push({ good: good[i / GOOD_EVERY]! })
    })

    const failures: string[] = []
    const byKind: Record<string, Record<string, number>> = {}
    const byRoute: Record<string, { bad: number; good: number }> = {}
    await pool(all.length, CONCURRENCY, async (i) => {
      const item = all[i]!
      const spec = 'bad' in item ? item.bad.spec : item.good.spec
      const route = 'bad' in item ? item.bad.route : item.good.route
      byRoute[route] ??= { bad: 0, good: 0 }
      let answer: Answer
      try {
        answer = await request(server.url, { ...spec, agent, timeoutMs: 30_000 })
      } catch (error) {
        recorder.transport(error)
        failures.push(`#${i} ${'bad' in item ? `[${item.bad.kind}]` : 'good'} ${spec.method ?? 'GET'} ${spec.path.slice(0, 100)}: ${(error as Error).message}`)
        return
      }
      recorder.answer(answer)
      if ('bad' in item) {
        byRoute[route].bad++
        const kind = `${route} ${item.bad.kind}`
        byKind[kind] ??= {}
        byKind[kind][answer.status] = (byKind[kind][answer.status] ?? 0) + 1
        const ok = answer.status >= 400 && answer.status < 500 && isJson(answer) && errorOf(answer) !== undefined
        if (!ok) failures.push(`#${i} [${item.bad.kind}] ${spec.method ?? 'GET'} ${spec.path.slice(0, 100)} -> ${answer.status} ${answer.text.slice(0, 200)}`)
      } else {
        byRoute[route].good++
        const problem = item.good.check(answer)
        if (problem) failures.push(`#${i} good ${spec.method ?? 'GET'} ${spec.path.slice(0, 100)} -> ${answer.status} ${answer.text.slice(0, 200)}: ${problem}`)
      }
    })
    recorder.figures.concurrency = CONCURRENCY
    recorder.fact('seed', SEED)
    recorder.fact('malformed', bad.length)
    recorder.fact('good', good.length)
    recorder.fact('byRoute', byRoute)
    recorder.fact('malformedByKind', byKind)
    expect(failures.slice(0, 30)).toEqual([])

    expect(server.child.exitCode).toBe(null)
    expect((await request(server.url, { path: '/-/healthz', timeoutMs: 60_000 })).status).toBe(200)
    expect(await gauges(server.url, ['edgeserve_queue_length', 'edgeserve_batches_in_flight'])).toEqual({
      edgeserve_queue_length: 0,
      edgeserve_batches_in_flight: 0,
    })
  })

  it('20 MB bodies get 413 JSON errors with Connection: close (declared lengths past each route limit)', async () => {
    // Raw sockets: the server answers 413 at once, while the client is still
    // writing; the answer must arrive whole, and say the connection closes.
    const size = 20 * 1024 * 1024
    for (const [path, type] of [
      ['/predict', 'application/json'],
      ['/ocr/direction', 'image/png'],
    ] as const) {
      for (let i = 0; i < 2; i++) {
        const head = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${type}\r\nContent-Length: ${size}\r\n\r\n`
        const raw = await rawExchange(server.url, head, { plainBytes: size }, 30_000)
        recorder.answer({ status: raw.status, headers: { 'content-type': 'application/json' }, body: Buffer.from(raw.body), text: raw.body, ms: raw.ms })
        expect([raw.status, errorOf({ text: raw.body } as Answer)?.type, /\r\nconnection: close(\r\n|$)/i.test(raw.head)], path).toEqual([
          413,
          'HTTPError',
          true,
        ])
      }
    }
    recorder.fact('twentyMegabyteBodies', 4)
  })

  it("requests Node's parser refuses get JSON errors with Connection: close (431 past the 16 KiB head limit, 400 malformed), and the server stays up", async () => {
    const answer = await request(server.url, { path: `/adder?number=${'9'.repeat(20_000)}`, timeoutMs: 10_000 })
    recorder.answer(answer)
    recorder.fact('oversizedRequestLine', { status: answer.status, type: errorOf(answer)?.type ?? null, connection: answer.headers.connection ?? null })
    expect([answer.status, isJson(answer), errorOf(answer)?.type, answer.headers.connection]).toEqual([431, true, 'HeadersTooLarge', 'close'])
    const malformed = [
      'GARBAGE /adder HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n',
      'GET /adder?number=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header: 1\r\n\r\n',
      'GET /adder?number=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n',
      'POST /predict HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nnot-hex\r\n',
    ]
    const statuses: string[] = []
    for (const head of malformed) {
      const raw = await rawExchange(server.url, head, {}, 10_000)
      const error = errorOf({ text: raw.body } as Answer)
      recorder.answer({ status: raw.status, headers: { 'content-type': 'application/json' }, body: Buffer.from(raw.body), text: raw.body, ms: raw.ms })
      statuses.push(`${raw.status} ${error?.type} ${/\r\nconnection: close(\r\n|$)/i.test(raw.head) ? 'close' : 'keep'}`)
    }
    recorder.fact('malformedHeads', statuses)
    expect(statuses).toEqual(malformed.map(() => '400 MalformedRequest close'))
    await sleep(50)
    expect(server.child.exitCode).toBe(null)
    expect((await request(server.url, { path: '/adder?number=1' })).text).toBe('2')
  })

  it('no error body carries a stack trace or a file path', () => {
    expect(recorder.leaks).toEqual([])
  })
})
