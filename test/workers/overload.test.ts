/**
 * A Durable Object's overload at the ingress, in real workerd: a 503 with
 * Retry-After and a JSON error, never a 500, and the router moves on to
 * another replica. The overload is a stand-in (see overload-app.ts): local
 * workerd never refuses a request for load, so replica 0 throws the
 * platform's error, marked `overloaded` as the platform marks it.
 */
import { describe, expect, it } from 'vitest'
import { workerForTests } from '../support/workerd.js'

/** What overload-app.ts throws: Cloudflare's text (that module runs only inside workerd). */
const OVERLOAD_MESSAGE = 'Durable Object is overloaded. Too many requests queued.'

const worker = workerForTests(new URL('./wrangler.toml', import.meta.url))

const get = (path: string, init?: RequestInit) => fetch(worker.url + path, init)
const post = (path: string, body: string) => get(path, { method: 'POST', body, headers: { 'content-type': 'text/plain' } })
const refused = async () => (await (await get('/overloaded/pair/refused')).json()) as number

async function expectOverloaded(response: Response) {
  expect(response.status).toBe(503)
  expect(response.headers.get('retry-after')).toBe('1')
  expect(await response.json()).toEqual({
    error: { type: 'ReplicaOverloadedError', message: expect.stringContaining(`is overloaded and refused this`) },
  })
}

describe('Workers: an overloaded Durable Object', () => {
  it('reaches the caller as workerd hands over the platform overload: .overloaded set, not .retryable', async () => {
    const seen = await (await get('/overloaded/raw')).json()
    expect(seen).toEqual({ thrown: true, message: OVERLOAD_MESSAGE, overloaded: true, remote: true })
  })

  it('answers 503 with Retry-After and a JSON error when the only replica is overloaded, for GET and POST', async () => {
    await expectOverloaded(await get('/overloaded/alone'))
    await expectOverloaded(await post('/overloaded/alone', 'a body the object never read'))
    // The connection and the Worker are fine afterwards.
    await expectOverloaded(await get('/overloaded/alone'))
  })

  it('a POST refused by an overloaded replica gets 503; the next requests go to the other replica', async () => {
    // Two replicas, one overloaded: a POST that the router sends there cannot be sent again (its body went
    // with it), so it is answered 503. Sent one at a time until one lands there (each pick is random).
    let answers = 0
    for (;;) {
      const response = await post('/overloaded/pair', `post ${answers}`)
      if (response.status !== 200) {
        await expectOverloaded(response)
        break
      }
      expect(await response.json()).toEqual({ replica: 1, body: `post ${answers}` })
      if (++answers > 40) throw new Error('no POST reached the overloaded replica in 40')
    }
    const refusedBefore = await refused()
    // For a moment, the router sends nothing new to the replica that said it is overloaded.
    for (let i = 0; i < 8; i++) {
      const response = await post('/overloaded/pair', `after ${i}`)
      expect(response.status).toBe(200)
      expect(await response.json()).toEqual({ replica: 1, body: `after ${i}` })
    }
    expect(await refused()).toBe(refusedBefore)
  })

  it('sends a GET that an overloaded replica refused to the other replica: every one answered 200', async () => {
    await new Promise((resolve) => setTimeout(resolve, 1100)) // past the router's avoidance from the test before
    const refusedBefore = await refused()
    const answers = await Promise.all(Array.from({ length: 24 }, () => get('/overloaded/pair')))
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200))
    expect(new Set(await Promise.all(answers.map(async (a) => ((await a.json()) as { replica: number }).replica)))).toEqual(new Set([1]))
    expect(await refused()).toBeGreaterThan(refusedBefore) // some did reach the overloaded replica first
  })

  it('sends a handle call that an overloaded replica refused to the other replica', async () => {
    await new Promise((resolve) => setTimeout(resolve, 1100))
    const refusedBefore = await refused()
    const answers = await Promise.all(Array.from({ length: 16 }, () => get('/overloaded/pair/call')))
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200))
    expect(new Set(await Promise.all(answers.map(async (a) => ((await a.json()) as { replica: number }).replica)))).toEqual(new Set([1]))
    expect(await refused()).toBeGreaterThan(refusedBefore)
  })
})
