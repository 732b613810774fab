/**
 * serveWorker()'s body pipe outside workerd (its module also loads in Node):
 * the app reads the body through it, and an early answer's settle() reads
 * the rest. In workerd the same is tested through wrangler dev
 * (test/e2e/wrangler-dev.test.ts, test/reliability/7-keep-alive.test.ts).
 */
import { describe, expect, it } from 'vitest'
import { watchBody } from '../../../src/runtime/workers/unread-body.js'

const post = (body: string) => new Request('http://127.0.0.1/', { method: 'POST', body })

describe('watchBody() outside workerd', () => {
  it('hands the app the whole body', async () => {
    const watched = watchBody(post('hello'))
    expect(await watched.request.text()).toBe('hello')
    await watched.settle(new Response('ok'))
  })

  it('reads the rest of a body the app refused after reading part of it', async () => {
    const watched = watchBody(post('x'.repeat(256 * 1024)))
    const reader = watched.request.body!.getReader()
    expect((await reader.read()).done).toBe(false)
    await reader.cancel()
    await watched.settle(new Response('too large', { status: 413 }))
  })

  it('leaves a request without a body as it is', async () => {
    const request = new Request('http://127.0.0.1/')
    expect(watchBody(request).request).toBe(request)
  })
})
