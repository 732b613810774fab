/**
 * Faults and boundaries in real workerd (wrangler's unstable_startWorker):
 * a Durable Object evicted in the middle of a batch, requests waiting in the
 * Worker's router, and what a handle or raw Durable Object RPC may call.
 */
import { fileURLToPath } from 'node:url'
import { unstable_startWorker } from 'wrangler'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { errorOf, request, type Answer } from './lib/http.js'
import { sleep } from './lib/proc.js'
import { Recorder } from './lib/record.js'

type Worker = Awaited<ReturnType<typeof unstable_startWorker>>
let worker: Worker
let base: string
const recorder = new Recorder('4-faults-workers', 'Faults on Workers: a Durable Object evicted mid-batch, router waits')
const security = new Recorder('6-security-do-rpc', 'Security on Workers: handle calls and raw Durable Object RPC')

beforeAll(async () => {
  worker = await unstable_startWorker({
    config: fileURLToPath(new URL('./workers/wrangler.toml', import.meta.url)),
    dev: { server: { hostname: '127.0.0.1', port: 0 }, inspector: false, watch: false, logLevel: 'none' },
  })
  await worker.ready
  base = (await worker.url).href.replace(/\/$/, '')
})
afterAll(async () => {
  await worker?.dispose()
  recorder.save()
  security.save()
})

const send = async (path: string, method = 'GET', into = recorder): Promise<Answer> => {
  const answer = await request(base, { path, method, timeoutMs: 15_000 })
  into.answer(answer)
  return answer
}

describe('faults on Workers', () => {
  it('a Durable Object evicted in the middle of a batch: every request is retried or gets 503, none hangs', async () => {
    const tally: Record<string, number> = {}
    for (let round = 0; round < 3; round++) {
      const xs = Array.from({ length: 24 }, (_, i) => round * 1000 + i)
      const started = Date.now()
      const inFlight = xs.map((x, i) => send(`/slow-batch?x=${x}`, i % 2 === 0 ? 'GET' : 'POST').then((a) => [x, i % 2 === 0 ? 'GET' : 'POST', a] as const))
      await sleep(150) // the first batch is running, the rest are queued in the object
      await send('/reset')
      for (const [x, method, answer] of await Promise.all(inFlight)) {
        const key = `${method} ${answer.status}`
        tally[key] = (tally[key] ?? 0) + 1
        if (answer.status === 200) expect(answer.text).toBe(String(x + 1))
        else {
          expect(answer.status, `${method} x=${x}: ${answer.text}`).toBe(503)
          expect(answer.headers['retry-after']).toBe('1')
          expect(errorOf(answer)?.type).toBe('ReplicaUnavailableError')
        }
      }
      expect(Date.now() - started).toBeLessThan(10_000)
      // A fresh object serves again.
      const after = await Promise.all(Array.from({ length: 8 }, (_, i) => send(`/slow-batch?x=${50_000 + i}`, 'POST')))
      expect(after.map((a) => a.text)).toEqual(Array.from({ length: 8 }, (_, i) => String(50_001 + i)))
    }
    // GETs are idempotent: retried on the fresh object, they are answered.
    expect(tally['GET 503'] ?? 0).toBe(0)
    recorder.fact('eviction', { rounds: 3, requestsPerRound: 24, outcomes: tally })
  })

  it('requests waiting in the Worker router for a busy replica are answered, not cancelled as hung', async () => {
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => send(`/narrow?x=${i}`)))
    expect(answers.map((a) => `${a.status} ${a.text.slice(0, 60)}`)).toEqual(Array.from({ length: 30 }, (_, i) => `200 ${i}`))
    recorder.fact('routerWaits', { requests: 30, maxOngoingRequests: 1, answered: answers.filter((a) => a.status === 200).length })
  })

  it('no error body carries a stack trace or a file path', () => {
    expect(recorder.leaks).toEqual([])
  })
})

describe('security on Workers', () => {
  const refused = [
    'constructor',
    '__proto__',
    'prototype',
    '_secret',
    'toString',
    'hasOwnProperty',
    'valueOf',
    '__defineGetter__',
    'isPrototypeOf',
    'nope',
    'resetForTest',
    'invoke',
    'metrics',
    'health',
    'describe',
    'ctx',
    'env',
    '',
  ]

  it('a handle call over Durable Object RPC reaches only declared methods', async () => {
    expect(JSON.parse((await send('/call?method=add&x=41', 'GET', security)).text)).toEqual({ value: 42 })
    for (const method of refused.filter(Boolean)) {
      const answer = JSON.parse((await send(`/call?method=${encodeURIComponent(method)}`, 'GET', security)).text) as {
        error?: { type: string; message: string }
        status?: number
      }
      security.scan(JSON.stringify(answer))
      expect(answer.status, method).toBe(404)
      expect(answer.error?.message, method).toMatch(/cannot be called through a handle/)
    }
  })

  it("raw Durable Object RPC (the object's invoke) refuses the same names", async () => {
    expect(JSON.parse((await send('/raw-invoke?method=add&x=1', 'GET', security)).text)).toEqual({ ok: true, value: 2 })
    for (const method of refused) {
      const outcome = JSON.parse((await send(`/raw-invoke?method=${encodeURIComponent(method)}`, 'GET', security)).text) as {
        ok: boolean
        error?: { status: number; message: string }
      }
      security.scan(JSON.stringify(outcome))
      expect(outcome.ok, method).toBe(false)
      expect(outcome.error?.status, method).toBe(404)
    }
    security.fact('refusedMethodNames', refused)
  })

  it('no URL reaches a Durable Object of this Worker directly', async () => {
    for (const path of ['/SlowBatch', '/SlowBatch/0', '/Narrow/0', '/-/rpc/default/SlowBatch/add', '/SlowBatch/0/invoke', '/SlowBatch/0/resetForTest']) {
      for (const method of ['GET', 'POST']) expect((await send(path, method, security)).status, `${method} ${path}`).toBe(404)
    }
    expect(security.leaks).toEqual([])
  })
})
