/**
 * The adder under load: `count` requests at `concurrency`, each with its own
 * number, each answer checked: 200 with exactly n+1, or 503 with Retry-After
 * and a JSON error. Every request must be answered exactly once.
 */
import type http from 'node:http'
import { errorOf, pool, request } from './http.js'
import { expect } from 'vitest'
import { gauges } from './proc.js'
import type { Recorder } from './record.js'

export interface LoadOutcome {
  ok: number
  backPressure: number
  wrong: string[]
  unanswered: number
  duplicated: number
  transport: number
  seconds: number
  requestsPerSecond: number
}

export async function adderLoad(options: {
  base: string
  path?: string
  count: number
  concurrency: number
  /** First number; request i sends first + i. */
  first: number
  agent: http.Agent
  recorder?: Recorder
  timeoutMs?: number
}): Promise<LoadOutcome> {
  const { base, count, concurrency, first, agent, recorder } = options
  const answered = new Uint8Array(count)
  const wrong: string[] = []
  let ok = 0
  let backPressure = 0
  let transport = 0
  const started = performance.now()
  await pool(count, concurrency, async (i) => {
    const n = first + i
    try {
      const answer = await request(base, { path: `${options.path ?? '/adder'}?number=${n}`, agent, timeoutMs: options.timeoutMs ?? 30_000 })
      recorder?.answer(answer)
      answered[i]!++
      if (answer.status === 200 && answer.text === String(n + 1)) ok++
      else if (answer.status === 503 && Number(answer.headers['retry-after']) >= 1 && errorOf(answer)) backPressure++
      else if (wrong.length < 20) wrong.push(`number=${n}: ${answer.status} ${answer.text.slice(0, 200)}`)
      else wrong.push('')
    } catch (error) {
      transport++
      recorder?.transport(error)
    }
  })
  const seconds = (performance.now() - started) / 1000
  let unanswered = 0
  let duplicated = 0
  for (const times of answered) {
    if (times === 0) unanswered++
    else if (times > 1) duplicated++
  }
  return { ok, backPressure, wrong, unanswered, duplicated, transport, seconds, requestsPerSecond: Math.round(count / seconds) }
}

/**
 * What every load run must show: each request answered exactly once, with
 * its own sum or a 503 with Retry-After, and the queues empty afterwards.
 */
export async function expectEveryAnswerOnce(outcome: LoadOutcome, requests: number, base: string, recorder: Recorder, concurrency: number): Promise<void> {
  recorder.fact('load', { ...outcome, wrong: outcome.wrong.filter(Boolean).length })
  recorder.figures.concurrency = concurrency
  expect(outcome.wrong.filter(Boolean)).toEqual([])
  expect(outcome.unanswered).toBe(0)
  expect(outcome.duplicated).toBe(0)
  expect(outcome.transport).toBe(0)
  expect(outcome.ok + outcome.backPressure).toBe(requests)

  // Queues drained: nothing waits, no batch runs.
  const after = await gauges(base, ['edgeserve_queue_length', 'edgeserve_batches_in_flight'])
  recorder.fact('gaugesAfter', after)
  expect(after).toEqual({ edgeserve_queue_length: 0, edgeserve_batches_in_flight: 0 })
}
