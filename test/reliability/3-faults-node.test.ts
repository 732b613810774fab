/**
 * Faults on Node, against `edgeserve run test/reliability/fixtures/fault-app.ts`
 * in its own process: a poison input, a wrong-length result, a hung handler,
 * clients that hang up while queued, and SIGTERM under load.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { errorOf, keepAliveAgent, pool, request, type Answer } from './lib/http.js'
import { gauges, sleep } from './lib/proc.js'
import { Recorder } from './lib/record.js'
import { startNode, type NodeServer } from './lib/servers.js'

const APP = 'test/reliability/fixtures/fault-app.ts'
const recorder = new Recorder('3-faults-node', 'Faults on Node: poison input, wrong-length results, a hung handler, hang-ups, SIGTERM')
let server: NodeServer

beforeAll(async () => {
  server = await startNode([APP])
})
afterAll(async () => {
  await server?.stop()
  recorder.save()
})

const get = async (path: string, init: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<Answer> => {
  const answer = await request(server.url, { path, timeoutMs: 10_000, ...init })
  recorder.answer(answer)
  return answer
}
const json = async <T>(path: string): Promise<T> => JSON.parse((await get(path)).text) as T

describe('faults on Node', () => {
  it("a handler that throws for one poison input: with onBatchError 'isolate' only that request fails", async () => {
    const xs = [...Array.from({ length: 120 }, (_, i) => i + 1), 666]
    const answers = await Promise.all(xs.map((x) => get(`/poison?x=${x}`)))
    const failed = answers.map((a, i) => [xs[i], a] as const).filter(([, a]) => a.status !== 200)
    expect(failed.map(([x]) => x)).toEqual([666])
    const [, poison] = failed[0]!
    expect(poison.status).toBe(500)
    // The handler's message names a file: the client must not see it.
    expect(JSON.parse(poison.text)).toEqual({ error: { type: 'InternalServerError', message: 'an internal error occurred while handling this request' } })
    answers.forEach((a, i) => xs[i] !== 666 && expect(a.text).toBe(String(xs[i]! * 2)))
    const calls = await json<number[][]>('/poison/seen')
    expect(calls.some((c) => c.length > 1)).toBe(true) // requests really were batched
    expect(calls.filter((c) => c.includes(666)).at(-1)).toEqual([666]) // bisected down to the poison alone
    recorder.fact('poison', { requests: xs.length, failed: 1, handlerCalls: calls.length, callsHoldingPoison: calls.filter((c) => c.includes(666)).length })
  })

  it('a wrong-length result fails its own batch with 500, and later batches are fine', async () => {
    const xs = [1, 2, 3, -1, 4, 5, 6, 7, 8, 9, 10, 11]
    const answers = await Promise.all(xs.map((x) => get(`/wrong-length?x=${x}`)))
    const batches = await json<number[][]>('/wrong-length/seen')
    const bad = new Set(batches.filter((b) => b.includes(-1)).flat())
    expect(bad.has(-1)).toBe(true)
    answers.forEach((a, i) => {
      const x = xs[i]!
      if (bad.has(x)) {
        expect(a.status, `x=${x}`).toBe(500)
        expect(errorOf(a)).toMatchObject({ type: 'BatchHandlerError', message: expect.stringMatching(/returned \d+ results for a batch of \d+ items/) })
      } else expect(a.text, `x=${x}`).toBe(String(x * 3))
    })
    const later = await Promise.all(Array.from({ length: 40 }, (_, i) => get(`/wrong-length?x=${100 + i}`)))
    expect(later.map((a) => a.text)).toEqual(Array.from({ length: 40 }, (_, i) => String((100 + i) * 3)))
    recorder.fact('wrongLength', { requests: xs.length + 40, failedWithTheirBatch: bad.size, laterBatchesOk: 40 })
  })

  it('a handler that hangs: requestTimeoutS gives 504, and the replica serves again', async () => {
    const timings: number[] = []
    for (let round = 0; round < 3; round++) {
      const started = Date.now()
      const hung = get('/hangs?x=-1')
      await sleep(50)
      // Callers that arrive while the batch hangs wait for the slot; once the hung caller leaves, they run.
      const during = Promise.all(Array.from({ length: 10 }, (_, i) => get(`/hangs?x=${i}`)))
      const answer = await hung
      timings.push(Date.now() - started)
      expect(answer.status).toBe(504)
      expect(errorOf(answer)?.type).toBe('RequestTimeoutError')
      for (const [i, a] of (await during).entries()) {
        // Either served after the slot came free, or timed out waiting: never a hang, never a wrong sum.
        if (a.status === 200) expect(a.text).toBe(String(i + 7))
        else expect([a.status, errorOf(a)?.type]).toEqual([504, 'RequestTimeoutError'])
      }
      const after = await Promise.all(Array.from({ length: 20 }, (_, i) => get(`/hangs?x=${100 + i}`)))
      expect(after.map((a) => a.text)).toEqual(Array.from({ length: 20 }, (_, i) => String(107 + i)))
    }
    expect(Math.max(...timings)).toBeLessThan(2_000)
    recorder.fact('hang', { rounds: 3, requestTimeoutS: 0.5, msTo504: timings })
  })

  it('clients that hang up while queued: their items never reach the handler', async () => {
    const first = get('/gated?x=1') // its batch holds the slot until the gate opens
    for (let i = 0; i < 100 && (await json<number[]>('/gated/seen')).length === 0; i++) await sleep(20)
    const xs = Array.from({ length: 40 }, (_, i) => 1000 + i)
    const controllers = xs.map(() => new AbortController())
    const pending = xs.map((x, i) =>
      request(server.url, { path: `/gated?x=${x}`, signal: controllers[i]!.signal, timeoutMs: 10_000 }).then(
        (a) => (recorder.answer(a), a),
        (e: unknown) => e as Error,
      ),
    )
    await sleep(300) // all queued behind the held batch
    const queued = await gauges(server.url, ['edgeserve_queue_length'])
    xs.forEach((_, i) => i % 2 === 1 && controllers[i]!.abort())
    await sleep(300) // the server sees the sockets close
    const afterHangUp = await gauges(server.url, ['edgeserve_queue_length'])
    expect(queued.edgeserve_queue_length).toBe(40)
    expect(afterHangUp.edgeserve_queue_length).toBe(20)
    await get('/gated/open')
    expect((await first).text).toBe('2')
    const results = await Promise.all(pending)
    results.forEach((r, i) => {
      if (i % 2 === 1) expect(r).toBeInstanceOf(Error)
      else expect((r as Answer).text).toBe(String(xs[i]! + 1))
    })
    const seen = await json<number[]>('/gated/seen')
    expect(seen.sort((a, b) => a - b)).toEqual([1, ...xs.filter((_, i) => i % 2 === 0)])
    expect(await gauges(server.url, ['edgeserve_queue_length', 'edgeserve_batches_in_flight'])).toEqual({
      edgeserve_queue_length: 0,
      edgeserve_batches_in_flight: 0,
    })
    recorder.fact('hangUps', { queued: 40, hungUp: 20, reachedHandler: seen.filter((x) => x >= 1000).length, hungUpReachedHandler: 0 })
  })

  it('SIGTERM under load: what is in flight is answered, later requests are refused cleanly, then exit 0', async () => {
    const drain = await startNode([APP])
    try {
      // Load that keeps going across the signal, on keep-alive sockets.
      const agent = keepAliveAgent(32)
      let stop = false
      let signalAt = Infinity
      const outcomes: { x: number; started: number; answer?: Answer; error?: string }[] = []
      let next = 0
      const load = pool(1_000_000, 32, async () => {
        if (stop) return
        const x = 5_000_000 + next++
        const started = performance.now()
        try {
          const answer = await request(drain.url, { path: `/drain?x=${x}`, agent, timeoutMs: 15_000 })
          recorder.answer(answer)
          outcomes.push({ x, started, answer })
        } catch (error) {
          recorder.transport(error)
          outcomes.push({ x, started, error: (error as { code?: string }).code ?? (error as Error).message })
          if (performance.now() > signalAt) await sleep(20) // the server is going away: do not spin
        }
      }).then(() => agent.destroy())
      // 200 requests on their own connections, known to be inside the server when the signal comes:
      // the Holding deployment keeps its batches until all 200 have arrived, then 300 ms more.
      await sleep(300)
      const inFlight = Array.from({ length: 200 }, (_, i) =>
        request(drain.url, { path: `/hold?x=${9_000_000 + i}`, timeoutMs: 15_000 }).then((a) => (recorder.answer(a), a)),
      )
      let arrived = 0
      for (let i = 0; i < 500 && arrived < 200; i++) {
        arrived = Number((await request(drain.url, { path: '/hold/arrived', timeoutMs: 5_000 })).text)
        if (arrived < 200) await sleep(5)
      }
      expect(arrived).toBe(200)
      signalAt = performance.now()
      drain.child.kill('SIGTERM')
      const answered = await Promise.all(inFlight)
      const lastAnswerAt = performance.now()
      const code = await drain.exited
      const exitAt = performance.now()
      await sleep(100)
      stop = true
      await load

      expect(answered.map((a) => a.text)).toEqual(Array.from({ length: 200 }, (_, i) => String(9_000_001 + i)))
      expect(code).toBe(0)
      expect(exitAt).toBeGreaterThanOrEqual(lastAnswerAt)
      const announced = Number(/answering (\d+) in-flight request/.exec(drain.output())?.[1])
      expect(announced).toBeGreaterThanOrEqual(200)
      // A request still on the wire when the signal comes (its connection not yet read by the
      // server) may be refused like a later one: "before" means sent 100 ms before the signal.
      const before = outcomes.filter((o) => o.started < signalAt - 100)
      const after = outcomes.filter((o) => o.started >= signalAt - 100)
      // Everything sent before the signal got its own right answer.
      expect(before.filter((o) => o.answer?.text !== String(o.x + 1)).map((o) => `${o.x}: ${o.answer?.status ?? o.error}`)).toEqual([])
      // Around and after it: a right answer, a 503 ShuttingDown with Retry-After, or a refused connection. Never a wrong answer or a hang.
      for (const o of after) {
        if (o.answer?.status === 200) expect(o.answer.text).toBe(String(o.x + 1))
        else if (o.answer) {
          expect(o.answer.status).toBe(503)
          expect(o.answer.headers['retry-after']).toBe('1')
          expect(errorOf(o.answer)?.type).toBe('ShuttingDown')
        } else expect(o.error).toMatch(/ECONNREFUSED|ECONNRESET|EPIPE|socket hang up/)
      }
      const tally = (list: typeof outcomes) =>
        list.reduce<Record<string, number>>((t, o) => {
          const k = o.answer ? String(o.answer.status) : String(o.error)
          t[k] = (t[k] ?? 0) + 1
          return t
        }, {})
      recorder.fact('sigterm', {
        inFlightAtSignal: announced,
        inFlightAnswered: answered.length,
        loadSentBeforeSignal: tally(before),
        loadSentAroundOrAfterSignal: tally(after),
        msFromSignalToExit: Math.round(exitAt - signalAt),
        exitCode: code,
      })
    } finally {
      await drain.stop()
    }
  })

  it('no error body carries a stack trace or a file path', () => {
    expect(recorder.leaks).toEqual([])
  })
})
