/**
 * The Node HTTP server under serve(): a kept-alive connection survives an
 * answer given before the request body was read, a body too large to read
 * closes the connection without losing its answer, and the requests Node's
 * parser refuses get JSON errors. A real server on loopback, raw sockets.
 */
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { RequestCancelledError, readBody } from '../../src/index.js'
import { deferred } from '../support/deferred.js'
import { listenHttp } from '../../src/runtime/node/http-server.js'
import { DRAIN_LIMIT_BYTES } from '../../src/runtime/node/connections.js'
import { RawConnection } from '../support/raw-connection.js'

const json = (status: number, type: string) =>
  Response.json({ error: { type, message: `refused with ${status}` } }, { status, headers: { 'content-type': 'application/json; charset=utf-8' } })

/** How the last body read by /direct ended, for the tests that hang up mid-body. */
let directRead = deferred<string>()
/** Called by /hold before it holds the thread: the test sends what must arrive meanwhile. */
let whileHeld: () => void = () => undefined

/** Answers as an app does: some routes before reading the body, some after reading part of it. */
async function app(request: Request): Promise<Response> {
  const { pathname } = new URL(request.url)
  if (pathname === '/ok') return new Response('ok')
  if (pathname === '/throws') throw new Error('a bug in the app')
  if (pathname === '/hold') {
    // Holds the thread as a model run does: the loop reads no socket meanwhile.
    whileHeld()
    const until = Date.now() + 1_500
    while (Date.now() < until);
    return new Response('held')
  }
  // readBody as a deployment calls it: nothing here touches the web Request's body or signal.
  if (pathname === '/direct') {
    try {
      const body = await readBody(request, 1024 * 1024)
      let sum = 0
      for (const byte of body) sum = (sum + byte) % 65_521
      directRead.resolve(`read ${body.byteLength}`)
      return Response.json({ bytes: body.byteLength, sum })
    } catch (error) {
      directRead.resolve(error instanceof RequestCancelledError ? 'cancelled' : `failed: ${String(error)}`)
      return json(error instanceof RequestCancelledError ? 499 : 413, 'HTTPError')
    }
  }
  // readBody once the whole body has arrived and waits in the stream's buffer.
  if (pathname === '/direct-later') {
    await new Promise((resolve) => setTimeout(resolve, 50))
    const limit = Number(new URL(request.url).searchParams.get('limit'))
    const body = await readBody(request, limit).catch(() => undefined)
    if (body === undefined) return json(413, 'HTTPError')
    let sum = 0
    for (const byte of body) sum = (sum + byte) % 65_521
    return Response.json({ bytes: body.byteLength, sum })
  }
  // The body read through the web Request first: readBody must not read it a second time.
  if (pathname === '/web-then-direct') {
    const text = await request.text()
    const again = await readBody(request).then(
      () => 'read again',
      (error: unknown) => (error instanceof TypeError ? 'TypeError' : String(error)),
    )
    return Response.json({ text, again })
  }
  // Answers after a while without reading the body, which has arrived whole meanwhile.
  const later = () => new Promise((resolve) => setTimeout(resolve, 50)).then(() => json(415, 'HTTPError'))
  if (pathname === '/unsupported-later') return later()
  // Touch the request as the deployments do (its signal), which makes the body a web stream.
  void request.signal
  if (pathname === '/unsupported') return json(415, 'HTTPError')
  if (pathname === '/unsupported-later-web') return later()
  if (pathname === '/limited') {
    try {
      await readBody(request, 1024)
    } catch {
      return json(413, 'HTTPError')
    }
    return new Response('read')
  }
  return json(404, 'NotFound')
}

let server: Server
let base: string

beforeAll(async () => {
  ;({ server } = await listenHttp({
    fetch: app,
    port: 0,
    hostname: '127.0.0.1',
    // Short client timeouts, so that the 408s come within the test.
    serverOptions: { headersTimeout: 400, requestTimeout: 2_000, connectionsCheckingInterval: 50 },
  }))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})

const post = (path: string, length: number, extra = '') =>
  `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: ${length}\r\n${extra}\r\n`
const GOOD = 'GET /ok HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'

describe('what @hono/node-server would answer with an empty body', () => {
  it('a Host no URL can have gets a 400 JSON error, and the next request on the connection is answered', async () => {
    const connection = await RawConnection.open(base)
    try {
      // "a b" is no host a URL can have: @hono/node-server cannot build the Request, and answered 400 with no body.
      await connection.send('GET /ok HTTP/1.1\r\nHost: a b\r\n\r\n')
      const refused = await connection.next()
      expect([refused.status, refused.headers['content-type'], JSON.parse(refused.body)]).toEqual([
        400,
        'application/json; charset=utf-8',
        { error: { type: 'HTTPError', message: 'the request has no valid URL: check its Host header and target' } },
      ])
      await connection.send(GOOD)
      expect((await connection.next()).body).toBe('ok')
    } finally {
      connection.close()
    }
  })

  it('an app that rejects gets a 500 JSON error, its error in the log, not an empty 500', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined)
    try {
      const answer = await fetch(`${base}/throws`)
      expect([answer.status, await answer.json()]).toEqual([
        500,
        { error: { type: 'InternalServerError', message: 'an internal error occurred while handling this request' } },
      ])
      expect(logged.mock.calls.some(([, error]) => error instanceof Error && error.message === 'a bug in the app')).toBe(true)
    } finally {
      logged.mockRestore()
    }
  })
})

describe('an answer given before the request body was read', () => {
  it('keeps the connection for bodies of 0 B to 1 MiB: the next request on it is answered', async () => {
    const connection = await RawConnection.open(base)
    const sizes = [0, 1, 1024, 16 * 1024, 65_536, 65_537, 256 * 1024, DRAIN_LIMIT_BYTES]
    for (const size of sizes) {
      for (const path of ['/unsupported', '/no-such-route']) {
        const sent = connection.send(post(path, size), size)
        const refused = await connection.next()
        await sent
        expect([refused.status, refused.headers.connection], `${path}, ${size} B`).toEqual([path === '/unsupported' ? 415 : 404, 'keep-alive'])
        expect(JSON.parse(refused.body)).toMatchObject({ error: { type: expect.any(String), message: expect.any(String) } })
        await connection.write(GOOD)
        expect((await connection.next()).body, `the request after ${path}, ${size} B`).toBe('ok')
      }
    }
    expect(connection.end).toBe('open')
    connection.close()
  })

  it('keeps the connection when the whole body arrived, unread, before the answer', async () => {
    // Under and over the body's 16 KiB buffer, left alone or made a web
    // stream (the request's signal read): the body is discarded and the next
    // request on the connection is read and answered.
    const connection = await RawConnection.open(base)
    for (const path of ['/unsupported-later', '/unsupported-later-web']) {
      for (const size of [1024, 40 * 1024]) {
        await connection.send(post(path, size), size)
        const refused = await connection.next()
        expect([refused.status, refused.headers.connection], `${path}, ${size} B`).toEqual([415, 'keep-alive'])
        await connection.write(GOOD)
        expect((await connection.next()).body, `the request after ${path}, ${size} B`).toBe('ok')
      }
    }
    expect(connection.end).toBe('open')
    connection.close()
  })

  it('keeps the connection while a slow body arrives for longer than @hono/node-server waits (500 ms)', async () => {
    const connection = await RawConnection.open(base)
    await connection.write(post('/unsupported', 64 * 1024))
    expect((await connection.next()).status).toBe(415)
    // About 0.8 s, within the test server's 2 s request timeout.
    for (let i = 0; i < 16; i++) {
      await connection.write(Buffer.alloc(4096, 0x61))
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    await connection.write(GOOD)
    expect((await connection.next()).body).toBe('ok')
    connection.close()
  })

  it('keeps the connection after a body cut off at a limit, read in part and then cancelled', async () => {
    const connection = await RawConnection.open(base)
    const chunk = Buffer.concat([Buffer.from('4000\r\n'), Buffer.alloc(0x4000, 0x61), Buffer.from('\r\n')])
    const head = 'POST /limited HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n'
    const sent = connection.send(head, Buffer.concat([...Array.from({ length: 8 }, () => chunk), Buffer.from('0\r\n\r\n')]))
    expect((await connection.next()).status).toBe(413)
    await sent
    await connection.write(GOOD)
    expect((await connection.next()).body).toBe('ok')
    connection.close()
  })

  it('past 1 MiB says Connection: close, reads on while the upload is written, then ends the connection with FIN', async () => {
    for (const size of [DRAIN_LIMIT_BYTES + 1, 20 * 1024 * 1024]) {
      const connection = await RawConnection.open(base)
      const sent = connection.send(post('/unsupported', size), size)
      const refused = await connection.next()
      expect([refused.status, refused.headers.connection], `${size} B`).toEqual([415, 'close'])
      // Every byte of the upload is taken (no reset while writing) ...
      await sent
      // ... and the connection ends cleanly.
      expect(await connection.ended()).toBe('fin')
    }
  })

  it('a chunked body that passes 1 MiB while drained ends the connection with FIN, after its answer', async () => {
    const connection = await RawConnection.open(base)
    const chunk = Buffer.concat([Buffer.from('10000\r\n'), Buffer.alloc(0x10000, 0x61), Buffer.from('\r\n')])
    await connection.write('POST /unsupported HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n')
    expect((await connection.next()).status).toBe(415)
    for (let i = 0; i < 24 && connection.end === 'open'; i++) await connection.write(chunk).catch(() => undefined)
    expect(await connection.ended()).toBe('fin')
  })
})

describe('a kept-alive connection while the thread is held', () => {
  const withKeepAliveTimeout = async (ms: number, body: () => Promise<void>) => {
    const previous = server.keepAliveTimeout
    server.keepAliveTimeout = ms
    try {
      await body()
    } finally {
      server.keepAliveTimeout = previous
      whileHeld = () => undefined
    }
  }

  it('answers the next request sent while a handler holds the thread past the keep-alive timeout', () =>
    // Node closes a connection idle for keepAliveTimeout + 1 s: 1.1 s here, shorter than /hold's 1.5 s.
    withKeepAliveTimeout(100, async () => {
      const idle = await RawConnection.open(base)
      await idle.write(GOOD)
      expect((await idle.next()).body).toBe('ok')
      // While /hold holds the thread, the idle connection's next request arrives, unread until the hold ends,
      // when its connection's idle timer is overdue.
      whileHeld = () => void idle.write(GOOD)
      const holder = await RawConnection.open(base)
      await holder.write('GET /hold HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
      expect((await holder.next()).body).toBe('held')
      expect((await idle.next()).body).toBe('ok')
      expect(idle.end).toBe('open')
      idle.close()
      holder.close()
    }))

  it('still closes a connection left idle past the keep-alive timeout, with a FIN', () =>
    withKeepAliveTimeout(100, async () => {
      const idle = await RawConnection.open(base)
      await idle.write(GOOD)
      expect((await idle.next()).body).toBe('ok')
      const answeredAt = performance.now()
      expect(await idle.ended(5_000)).toBe('fin')
      expect(performance.now() - answeredAt).toBeGreaterThanOrEqual(1_000)
    }))
})

describe('readBody on Node', () => {
  const checksum = (bytes: Buffer) => {
    let sum = 0
    for (const byte of bytes) sum = (sum + byte) % 65_521
    return sum
  }

  it('whole bodies of every size, by Content-Length and chunked, on one kept-alive connection', async () => {
    const connection = await RawConnection.open(base)
    for (const size of [0, 1, 1000, 65_536, 65_537, 300_000, 1024 * 1024]) {
      const body = Buffer.from(Array.from({ length: size }, (_, i) => (i * 7 + size) % 251))
      const sent = connection.send(post('/direct', size), body)
      const answer = await connection.next()
      await sent
      expect([answer.status, JSON.parse(answer.body)], `${size} B`).toEqual([200, { bytes: size, sum: checksum(body) }])
    }
    const chunked = Buffer.concat([Buffer.from('3\r\nabc\r\n5\r\ndefgh\r\n0\r\n\r\n')])
    await connection.write('POST /direct HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n')
    await connection.write(chunked)
    expect(JSON.parse((await connection.next()).body)).toEqual({ bytes: 8, sum: checksum(Buffer.from('abcdefgh')) })
    await connection.write(GOOD)
    expect((await connection.next()).body).toBe('ok')
    connection.close()
  })

  it('a body read after it has all arrived is whole, past the limit a 413, and the connection stays usable', async () => {
    const connection = await RawConnection.open(base)
    for (const size of [0, 10, 300_000]) {
      const body = Buffer.from(Array.from({ length: size }, (_, i) => (i * 3 + size) % 251))
      const sent = connection.send(post('/direct-later?limit=1000000', size), body)
      const answer = await connection.next()
      await sent
      expect([answer.status, JSON.parse(answer.body)], `${size} B`).toEqual([200, { bytes: size, sum: checksum(body) }])
    }
    const sent = connection.send(post('/direct-later?limit=1000', 5000), Buffer.alloc(5000, 0x61))
    expect((await connection.next()).status).toBe(413)
    await sent
    await connection.write(GOOD)
    expect((await connection.next()).body).toBe('ok')
    connection.close()
  })

  it('stops at the limit with 413, and the next request on the connection is answered', async () => {
    const connection = await RawConnection.open(base)
    const chunk = Buffer.concat([Buffer.from('10000\r\n'), Buffer.alloc(0x10000, 0x62), Buffer.from('\r\n')])
    const head = 'POST /direct HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n'
    // 17 chunks of 64 KiB: past the route's 1 MiB, within what the server drains after an answer.
    const sent = connection.send(head, Buffer.concat([...Array.from({ length: 17 }, () => chunk), Buffer.from('0\r\n\r\n')]))
    expect((await connection.next()).status).toBe(413)
    await sent
    await connection.write(GOOD)
    expect((await connection.next()).body).toBe('ok')
    connection.close()
  })

  it('a client that hangs up mid-body: the read fails as cancelled, it does not hang', async () => {
    directRead = deferred<string>()
    const connection = await RawConnection.open(base)
    await connection.write(post('/direct', 10_000) + 'only part of it')
    await new Promise((resolve) => setTimeout(resolve, 50))
    connection.close()
    expect(await directRead.promise).toBe('cancelled')
  })

  it('a body already read through the web Request is not read again', async () => {
    const answer = await fetch(`${base}/web-then-direct`, { method: 'POST', body: 'hello' })
    expect(await answer.json()).toEqual({ text: 'hello', again: 'TypeError' })
  })
})

describe("requests Node's parser refuses get JSON errors and Connection: close", () => {
  const refused = async (write: (connection: RawConnection) => Promise<void>) => {
    const connection = await RawConnection.open(base)
    await write(connection)
    const answer = await connection.next()
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(answer.headers.connection).toBe('close')
    const body = JSON.parse(answer.body) as { error: { type: string; message: string } }
    expect(Object.keys(body)).toEqual(['error'])
    expect(await connection.ended()).toBe('fin')
    return { status: answer.status, ...body.error }
  }

  it('400 for a malformed request', async () => {
    for (const request of ['GARBAGE / HTTP/1.1\r\nHost: x\r\n\r\n', 'GET / HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n', 'GET / HTTP/9.9\r\n\r\n']) {
      const error = await refused((c) => c.write(request))
      expect([error.status, error.type], JSON.stringify(request)).toEqual([400, 'MalformedRequest'])
      expect(error.message).toMatch(/^this is not a valid HTTP\/1\.1 request: /)
    }
  })

  it('431 for a request head past the header size limit', async () => {
    const error = await refused((c) => c.write(`GET /ok?x=${'9'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`))
    expect([error.status, error.type]).toEqual([431, 'HeadersTooLarge'])
    expect(error.message).toMatch(/must fit in \d+ bytes/)
  })

  it('408 for a head, or a body, that does not arrive within the server timeouts', async () => {
    const head = await refused((c) => c.write('GET /ok HTTP/1.1\r\nHost: x\r\n'))
    expect([head.status, head.type]).toEqual([408, 'ClientTimeout'])
    // An app that waits for the body.
    const body = await refused((c) => c.write(post('/limited', 100) + 'only part of it'))
    expect([body.status, body.type]).toEqual([408, 'ClientTimeout'])
  })

  it('no second answer when the body of a request answered early does not arrive in time', async () => {
    const connection = await RawConnection.open(base)
    await connection.write(post('/unsupported', 100) + 'only part of it')
    expect((await connection.next()).status).toBe(415)
    // Past the request timeout: the connection closes, with nothing more on it.
    expect(await connection.ended()).toBe('fin')
    await expect(connection.next(100)).rejects.toThrow(/ended before an answer/)
  })

  it('a malformed request after a good one on the same connection: the good one keeps its answer', async () => {
    const connection = await RawConnection.open(base)
    await connection.write(GOOD + 'GARBAGE / HTTP/1.1\r\n\r\n')
    expect((await connection.next()).body).toBe('ok')
    expect((await connection.next()).status).toBe(400)
    expect(await connection.ended()).toBe('fin')
  })
})
