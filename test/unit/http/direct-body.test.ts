/**
 * readBody() and readJson() read a body the runtime offers directly (on
 * Node, the socket's stream) in place of `request.body`, and fall back to
 * `request.body` when the offer is no longer good.
 */
import { describe, expect, it } from 'vitest'
import { BODY_TOO_LARGE, offerDirectBody, readBody, readJson } from '../../../src/http/body.js'
import { HTTPError } from '../../../src/errors.js'

const post = (body: string) => new Request('http://x/', { method: 'POST', body, headers: { 'content-type': 'application/json' } })

describe('a body offered directly', () => {
  it('is what readBody() and readJson() read, and request.body is left alone', async () => {
    const request = post('"from the web stream"')
    const limits: number[] = []
    offerDirectBody(request, { read: (limit) => (limits.push(limit), Promise.resolve(new TextEncoder().encode('"direct"'))) })
    expect(await readJson(request, 4096)).toBe('direct')
    expect(limits).toEqual([4096])
    expect(request.bodyUsed).toBe(false)
  })

  it('is offered once: a second read goes to request.body', async () => {
    const request = post('"web"')
    offerDirectBody(request, { read: () => Promise.resolve(new TextEncoder().encode('"direct"')) })
    expect(await readJson(request)).toBe('direct')
    expect(await readJson(request)).toBe('web')
  })

  it('past the limit is a 413, as from request.body', async () => {
    const request = post('"web"')
    offerDirectBody(request, { read: () => Promise.resolve(BODY_TOO_LARGE) })
    const error = await readBody(request, 10).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(HTTPError)
    expect(error).toMatchObject({ status: 413, message: 'the request body is larger than the limit of 10 bytes' })
  })

  it('no longer available (read() answers undefined): readBody() reads request.body', async () => {
    const request = post('"web"')
    offerDirectBody(request, { read: () => undefined })
    expect(await readJson(request)).toBe('web')
  })

  it("takes the request's headers from the offer where it gives them, not from request.headers", async () => {
    const headers: Record<string, string> = { 'content-type': 'text/plain', 'content-length': '8' }
    const asked: string[] = []
    const offer = (request: Request) =>
      offerDirectBody(request, {
        read: () => new TextEncoder().encode('"direct"'),
        header: (name) => (asked.push(name), headers[name] ?? null),
      })
    const json = post('"web"') // says application/json; the offer says text/plain
    offer(json)
    await expect(readJson(json)).rejects.toMatchObject({ status: 415 })
    headers['content-type'] = 'application/json'
    const small = post('"web"')
    offer(small)
    await expect(readBody(small, 4)).rejects.toMatchObject({ status: 413 }) // the offer's Content-Length, 8
    const fine = post('"web"')
    offer(fine)
    expect(await readJson(fine)).toBe('direct')
    expect(asked).toEqual(['content-type', 'content-length', 'content-type', 'content-length'])
  })

  it('a declared Content-Length over the limit is refused before the offer is read', async () => {
    const request = new Request('http://x/', { method: 'POST', body: 'x'.repeat(100), headers: { 'content-length': '100' } })
    let reads = 0
    offerDirectBody(request, { read: () => (reads++, Promise.resolve(new Uint8Array(100))) })
    await expect(readBody(request, 10)).rejects.toMatchObject({ status: 413 })
    expect(reads).toBe(0)
  })
})

describe('body limits', () => {
  it('a limit that is not a number of bytes is the app’s bug: a TypeError (a 500), never a 413 for the client', async () => {
    const request = () => new Request('http://x/', { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })
    await expect(readJson(request(), -1)).rejects.toThrow(new TypeError("readJson()'s limit must be a number of bytes, 0 or more (Infinity for none), received -1"))
    await expect(readBody(request(), '1kb' as never)).rejects.toThrow(/^readBody\(\)'s limit must be a number of bytes.* received "1kb"$/)
    await expect(readBody(request(), NaN)).rejects.toThrow(TypeError)
    expect(await readJson(request(), Infinity)).toEqual({})
  })

  it('a streamed body with no Content-Length is refused with 413 once it passes the limit', async () => {
    const chunks = [new Uint8Array(600), new Uint8Array(600)]
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const chunk = chunks.shift()
        if (chunk) controller.enqueue(chunk)
        else controller.close()
      },
    })
    const request = new Request('http://x/', { method: 'POST', body, duplex: 'half' } as RequestInit)
    expect(request.headers.get('content-length')).toBeNull()
    await expect(readBody(request, 1024)).rejects.toMatchObject({ status: 413 })
  })
})

describe('readJson', () => {
  it('refuses a body that is not UTF-8 with 400, even where the JSON would parse', async () => {
    // An invalid byte inside a string: a lenient decoder would make it U+FFFD and parse.
    const bytes = new Uint8Array([...new TextEncoder().encode('{"a":"'), 0xff, ...new TextEncoder().encode('"}')])
    const request = new Request('http://x/', { method: 'POST', body: bytes, headers: { 'content-type': 'application/json' } })
    await expect(readJson(request)).rejects.toThrow(new HTTPError(400, 'the request body is not valid UTF-8'))
  })
})
