/**
 * readBody() and readJson() on a platform Request (as on Workers, in a
 * browser, or on a replica thread), and request.json() made to answer 400
 * for a body that is not JSON.
 */
import { describe, expect, it } from 'vitest'
import { holdBody, unreadableBodies } from '../../../src/deployment/body/held.js'
import { answerBadJsonWith400 } from '../../../src/deployment/body/json-or-400.js'
import { readBody, readJson } from '../../../src/deployment/body/read.js'
import { HTTPError } from '../../../src/errors.js'

const post = (body: BodyInit, headers: Record<string, string> = {}) =>
  new Request('http://x/', { method: 'POST', body, headers, duplex: 'half' } as RequestInit)

/** A body of unknown length, sent in `chunks` pieces of `size` bytes. */
const streamed = (chunks: number, size: number) =>
  new ReadableStream<Uint8Array>({
    pull(controller) {
      if (chunks-- === 0) return controller.close()
      controller.enqueue(new Uint8Array(size).fill(0x61))
    },
  })

const status = (promise: Promise<unknown>) =>
  promise.then(
    () => 'read',
    (error: unknown) => (error instanceof HTTPError ? error.status : String(error)),
  )

describe('readBody()', () => {
  it('reads a body of a declared length whole, and refuses one declared past the limit with 413', async () => {
    expect(await readBody(post('hello', { 'content-length': '5' }), 5)).toEqual(new TextEncoder().encode('hello'))
    expect(await status(readBody(post('hello', { 'content-length': '5' }), 4))).toBe(413)
  })

  it('cuts a body of unknown length off at the limit with 413', async () => {
    expect((await readBody(post(streamed(4, 256)), 1024)).byteLength).toBe(1024)
    expect(await status(readBody(post(streamed(5, 256)), 1024))).toBe(413)
  })

  it("refuses a limit that is not a number of bytes, as the app's mistake", async () => {
    await expect(readBody(post('x'), -1)).rejects.toThrow(TypeError)
  })
})

describe('readJson()', () => {
  it('parses JSON, and answers 415 for another content type and 400 for a body that is not JSON or not UTF-8', async () => {
    expect(await readJson(post('{"a":1}', { 'content-type': 'application/json' }))).toEqual({ a: 1 })
    expect(await status(readJson(post('{"a":1}', { 'content-type': 'text/plain' })))).toBe(415)
    // UTF-8 said any way a client says it is JSON; another charset is refused, not read as UTF-8.
    for (const type of ['application/json; charset=utf-8', 'application/json;charset="UTF-8"', 'application/json; charset=utf8']) {
      expect(await readJson(post('{"a":1}', { 'content-type': type }))).toEqual({ a: 1 })
    }
    const utf16 = readJson(post('{"a":1}', { 'content-type': 'application/json; charset=utf-16' }))
    await expect(utf16).rejects.toMatchObject({ status: 415, message: 'expected a UTF-8 JSON body, received charset "utf-16"' })
    expect(await status(readJson(post('{"a":', { 'content-type': 'application/json' })))).toBe(400)
    expect(await status(readJson(post(new Uint8Array([0x22, 0xff, 0x22]), { 'content-type': 'application/json' })))).toBe(400)
  })
})

describe('request.json() after answerBadJsonWith400()', () => {
  it('parses JSON as before, and throws a 400 HTTPError for a body that is not JSON', async () => {
    const good = post('[1,2]')
    answerBadJsonWith400(good)
    expect(await good.json()).toEqual([1, 2])
    const bad = post('not json')
    answerBadJsonWith400(bad)
    const error = await bad.json().catch((error: unknown) => error)
    expect([error instanceof HTTPError, (error as HTTPError).status, (error as HTTPError).message]).toEqual([true, 400, 'the request body is not valid JSON'])
  })
})

describe('a body read again, as a batch re-run without its failed items reads its requests', () => {
  it('readBody() and readJson() give the same body a second time, still held to the limit', async () => {
    const request = post('{"x":1}', { 'content-length': '7', 'content-type': 'application/json' })
    expect(await readJson(request)).toEqual({ x: 1 })
    expect(await readJson(request)).toEqual({ x: 1 })
    expect(await status(readBody(request, 3))).toBe(413)
    const chunked = post(streamed(2, 3))
    expect((await readBody(chunked)).byteLength).toBe(6)
    expect((await readBody(chunked)).byteLength).toBe(6)
  })

  it('request.json() parses the body again instead of finding it used', async () => {
    const request = post('{"features":[1,2]}')
    answerBadJsonWith400(request)
    expect(await request.json()).toEqual({ features: [1, 2] })
    expect(await request.json()).toEqual({ features: [1, 2] })
  })
})

describe('holdBody(): a body read whole before its request joins a batch', () => {
  it('answers every read from memory, as often as it is made, with the same request object', async () => {
    const request = post('{"features":[1,2]}', { 'content-type': 'application/json' })
    await holdBody(request, 1024)
    expect(request.bodyUsed).toBe(true) // the platform's own: the body was read
    expect(request).toBeInstanceOf(Request)
    for (let i = 0; i < 2; i++) {
      expect(await request.json()).toEqual({ features: [1, 2] })
      expect(await request.text()).toBe('{"features":[1,2]}')
      expect(new TextDecoder().decode(await request.arrayBuffer())).toBe('{"features":[1,2]}')
      expect(await request.bytes()).toEqual(new TextEncoder().encode('{"features":[1,2]}'))
      expect(await readJson(request)).toEqual({ features: [1, 2] })
    }
    const blob = await request.blob()
    expect([blob.type, await blob.text()]).toEqual(['application/json', '{"features":[1,2]}'])
    expect(await new Response(request.body).text()).toBe('{"features":[1,2]}')
    expect(request.body).toBe(request.body) // one stream, as the platform gives
    expect(await request.clone().json()).toEqual({ features: [1, 2] })
  })

  it('gives each read its own copy: writing into one changes no later read', async () => {
    const request = post('abc')
    await holdBody(request, 1024)
    new Uint8Array(await request.arrayBuffer()).fill(0)
    ;(await request.bytes()).fill(0)
    expect(await request.text()).toBe('abc')
  })

  it('still answers 400 for a body that is not JSON, and reads a form', async () => {
    const bad = post('{"a":')
    await holdBody(bad, 1024)
    expect(await status(bad.json())).toBe(400)
    const form = post(new URLSearchParams({ a: '1' }))
    await holdBody(form, 1024)
    expect((await form.formData()).get('a')).toBe('1')
  })

  it('refuses a body past the limit with 413, declared or of unknown length', async () => {
    expect(await status(holdBody(post('hello', { 'content-length': '5' }), 4))).toBe(413)
    expect(await status(holdBody(post(streamed(5, 256)), 1024))).toBe(413)
  })

  it('leaves a GET alone', async () => {
    const request = new Request('http://x/')
    await holdBody(request, 0)
    expect(Object.getOwnPropertyNames(request)).toEqual([])
  })
})

describe('unreadableBodies(): the held requests of a batch whose bodies could not be read as asked', () => {
  it('names every such request with its own error, once the failed read is among them', async () => {
    const requests = [post('{"a":1}'), post('{"a":', { 'content-type': 'application/json' }), post('{"a":1}', { 'content-type': 'text/plain' })]
    for (const request of requests) await holdBody(request, 1024)
    const reads = Promise.all([requests[0]!.json(), requests[1]!.json(), readJson(requests[2]!)])
    const thrown = await reads.catch((error: unknown) => error)
    const failed = await unreadableBodies(requests, thrown)
    expect([...failed!.errors].map(([index, error]) => [index, (error as HTTPError).status])).toEqual([
      [1, 400],
      [2, 415],
    ])
    expect(await unreadableBodies(requests, new Error('the model failed'))).toBeUndefined()
  })
})
