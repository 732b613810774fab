/**
 * serveWorker()'s body handling outside workerd: small bodies left to the app and read after its answer if it did not, the rest through its pipe (its module also loads in Node):
 * the app reads the body through it, and an early answer's readRestAfter() reads
 * the rest. In workerd the same is tested through wrangler dev
 * (test/e2e/wrangler-dev.test.ts, test/reliability/7-keep-alive.test.ts).
 */
import { describe, expect, it } from 'vitest'
import { WHOLE_BODY_BYTES, hasSmallBody, readIfUnread, watchBody } from '../../../src/runtime/workers/unread-body.js'

const post = (body: string) => new Request('http://127.0.0.1/', { method: 'POST', body })

describe('watchBody() outside workerd', () => {
  it('hands the app the whole body', async () => {
    const watched = watchBody(post('hello'))
    expect(await watched.request.text()).toBe('hello')
    await watched.readRestAfter(new Response('ok'))
  })

  it('reads the rest of a body the app refused after reading part of it', async () => {
    const watched = watchBody(post('x'.repeat(256 * 1024)))
    const reader = watched.request.body!.getReader()
    expect((await reader.read()).done).toBe(false)
    await reader.cancel()
    await watched.readRestAfter(new Response('too large', { status: 413 }))
  })

  it('leaves a request without a body as it is', async () => {
    const request = new Request('http://127.0.0.1/')
    expect(watchBody(request).request).toBe(request)
  })
})

describe('hasSmallBody() and readIfUnread()', () => {
  const declared = (body: string, headers: Record<string, string> = {}) =>
    new Request('http://127.0.0.1/predict?x=1', {
      method: 'POST',
      body,
      headers: { 'content-length': String(body.length), 'content-type': 'application/json', ...headers },
    })

  it('takes a body of declared length up to WHOLE_BODY_BYTES as small, by its header alone', () => {
    expect(hasSmallBody(declared('{"features":[1,2]}'))).toBe(true)
    expect(hasSmallBody(declared('x'.repeat(WHOLE_BODY_BYTES)))).toBe(true)
    expect(hasSmallBody(declared(''))).toBe(true)
  })

  it('leaves a larger body, one of undeclared length and a request without one to watchBody()', () => {
    expect(hasSmallBody(declared('x'.repeat(WHOLE_BODY_BYTES + 1)))).toBe(false)
    expect(hasSmallBody(post('hello'))).toBe(false)
    expect(hasSmallBody(new Request('http://127.0.0.1/'))).toBe(false)
    expect(hasSmallBody(declared('x', { 'content-length': 'lots' }))).toBe(false)
  })

  it('reads a body the app left, and leaves one the app read', async () => {
    const left = declared('{"features":[1,2]}')
    await readIfUnread(left)
    expect(left.bodyUsed).toBe(true)
    const read = declared('{"features":[1,2]}')
    expect(await read.json()).toEqual({ features: [1, 2] })
    await readIfUnread(read) // a second read would throw: the body is used
  })

  it('shrugs off a body that fails mid-read (a client gone)', async () => {
    const failing = new ReadableStream<Uint8Array>({ pull: (controller) => controller.error(new Error('connection lost')) })
    const request = new Request('http://127.0.0.1/', { method: 'POST', body: failing, headers: { 'content-length': '10' }, duplex: 'half' } as RequestInit)
    await expect(readIfUnread(request)).resolves.toBeUndefined()
  })
})
