/** A Worker's side of shared calls: the requests that arrive together go in one call, and each gets its own answer. */
import { describe, expect, it } from 'vitest'
import { SharedCalls } from '../../../src/runtime/workers/shared-calls.js'
import type { CarriedAnswer, CarriedRequest } from '../../../src/runtime/workers/carried-request.js'

const request = (id: number, body: ArrayBuffer | null = null): CarriedRequest => ({ method: 'GET', url: `http://x/?id=${id}`, headers: [], body })
const echo = (requests: CarriedRequest[]): CarriedAnswer[] =>
  requests.map((r) => ({ status: 200, statusText: '', headers: [], body: new URL(r.url).searchParams.get('id') }))
const kept: Promise<unknown>[] = []
const waitUntil = (work: Promise<unknown>) => void kept.push(work)

describe('SharedCalls', () => {
  it('sends the requests that arrive together in one call, and hands each its own answer', async () => {
    const sent: CarriedRequest[][] = []
    const calls = new SharedCalls(async (requests) => (sent.push(requests), echo(requests)))
    const answers = await Promise.all([1, 2, 3, 4, 5].map((id) => calls.carry(request(id), waitUntil)))
    expect(sent.map((call) => call.length)).toEqual([5])
    expect(answers.map((answer) => (answer as { body: string }).body)).toEqual(['1', '2', '3', '4', '5'])
    // A request arriving after the call went out starts the next one.
    expect(await calls.carry(request(6), waitUntil)).toMatchObject({ body: '6' })
    expect(sent.map((call) => call.length)).toEqual([5, 1])
  })

  it('sends a full call at once: 128 requests, or 4 MiB of bodies', async () => {
    const sent: number[] = []
    const calls = new SharedCalls(async (requests) => (sent.push(requests.length), echo(requests)))
    await Promise.all(Array.from({ length: 130 }, (_, i) => calls.carry(request(i), waitUntil)))
    expect(sent).toEqual([128, 2])
    sent.length = 0
    await Promise.all(Array.from({ length: 5 }, (_, i) => calls.carry(request(i, new ArrayBuffer(1024 * 1024)), waitUntil)))
    expect(sent).toEqual([4, 1])
  })

  it("fails every request of a call that failed with the call's error", async () => {
    const reset = Object.assign(new Error('Network connection lost.'), { retryable: true })
    const calls = new SharedCalls(async () => Promise.reject(reset))
    const settled = await Promise.allSettled([1, 2, 3].map((id) => calls.carry(request(id), waitUntil)))
    expect(settled).toEqual(Array.from({ length: 3 }, () => ({ status: 'rejected', reason: reset })))
  })

  it('fails every request of a call answered with the wrong number of answers, never hanging one', async () => {
    const calls = new SharedCalls(async (requests) => echo(requests).slice(1))
    const settled = await Promise.allSettled([1, 2].map((id) => calls.carry(request(id), waitUntil)))
    for (const each of settled) expect(each).toMatchObject({ status: 'rejected', reason: { message: 'a replica answered 1 of the 2 requests of a shared call' } })
  })

  it("keeps the sender's work alive with its waitUntil", async () => {
    const given: Promise<unknown>[] = []
    const calls = new SharedCalls(async (requests) => echo(requests))
    await Promise.all([calls.carry(request(1), (work) => void given.push(work)), calls.carry(request(2), waitUntil)])
    // The zero timer, then the call and its hand-out: both under the first request's waitUntil.
    expect(given).toHaveLength(2)
    await Promise.all(given)
  })
})
