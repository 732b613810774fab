/**
 * Security on Node: what a handle may call (in-process, and over the HTTP RPC
 * route with a token), the RPC route off by default and closed without the
 * token, and bodies over the limit refused with 413 before they are read whole.
 * (Durable Objects: 2-load-workers.test.ts and 4-faults-workers.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deployment, getHandle } from '../../src/index.js'
import { Replica } from '../../src/deployment/replica.js'
import { ReplicaSet } from '../../src/deployment/replica-set.js'
import { errorOf, errorTypeIn, request, type Answer, type RequestSpec } from './lib/http.js'
import { rawExchange } from './lib/raw.js'
import { Recorder } from './lib/record.js'
import { startNode, type NodeServer } from './lib/servers.js'

const TOKEN = 'reliability-token-7f3a9c1e5b2d4086'
const recorder = new Recorder('6-security-node', 'Security on Node: handle allow-list, the RPC route and its token, body limits')
let withRpc: NodeServer
let plain: NodeServer

beforeAll(async () => {
  ;[withRpc, plain] = await Promise.all([
    startNode(['examples/demo/app.ts', '--rpc-token', TOKEN]),
    startNode(['examples/demo/app.ts'], { EDGESERVE_RPC_TOKEN: '' }),
  ])
})
afterAll(async () => {
  await Promise.all([withRpc?.stop(), plain?.stop()])
  recorder.save()
})

const send = async (base: string, spec: RequestSpec): Promise<Answer> => {
  const answer = await request(base, { timeoutMs: 15_000, ...spec })
  recorder.answer(answer)
  return answer
}

/** Names no handle may call: the constructor, prototype plumbing, Object.prototype, '_'-names, undeclared ones. */
const FORBIDDEN = [
  'constructor',
  '__proto__',
  'prototype',
  '_private',
  '_',
  '__defineGetter__',
  '__defineSetter__',
  '__lookupGetter__',
  'toString',
  'toLocaleString',
  'valueOf',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
  'computed',
  'secret',
  'counter',
  'missing',
  'apply',
  'call',
  'bind',
  'length',
  'name',
]

class Guarded {
  secret = 'field, not a method'
  counter = 0
  visible(x: number) {
    return x + 1
  }
  _private() {
    return 'private'
  }
  get computed() {
    this.counter++
    return () => 'getter'
  }
}
class Derived extends Guarded {
  more(x: number) {
    return x * 2
  }
}

describe('handles call only what the class declares', () => {
  it('in-process handles refuse the constructor, __proto__, prototype members and _-names', async () => {
    const guarded = deployment(Derived, { name: 'Guarded' })
    const replica = new Replica(guarded, 0)
    const handle = getHandle(guarded, { Guarded: new ReplicaSet(guarded, [replica]) }) as unknown as Record<
      string,
      { remote(...a: unknown[]): Promise<unknown> }
    >
    expect(await handle.visible!.remote(1)).toBe(2)
    expect(await handle.more!.remote(2)).toBe(4)
    for (const name of [...FORBIDDEN, '']) {
      const error = await handle[name]!.remote(1).then(
        () => undefined,
        (e: unknown) => e as { status?: number; message: string },
      )
      expect(error?.status, name).toBe(404)
      expect(error?.message, name).toMatch(/cannot be called through a handle/)
      recorder.scan(error!.message)
    }
    // Refused before anything ran: the getter was never read.
    const instance = replica.instance() as Guarded
    expect(instance.counter).toBe(0)
    recorder.fact('inProcessRefused', FORBIDDEN.length + 1)
  })

  it('the HTTP RPC route (with the token) refuses the same names, plain or percent-encoded', async () => {
    const call = (method: string, body = '{"args":[41]}') =>
      send(withRpc.url, {
        method: 'POST',
        path: `/-/rpc/default/BatchAdder/${method}`,
        body,
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      })
    expect(JSON.parse((await call('handleBatch')).text)).toEqual({ value: 42 })
    const encoded = ['%63onstructor', '%5F_proto__', '__proto%5F_', 'to%53tring', '%5Fprivate', 'handleBatch%00', 'handleBatch%20', 'HANDLEBATCH']
    for (const name of [...FORBIDDEN.map(encodeURIComponent), ...encoded]) {
      const answer = await call(name)
      expect([answer.status, errorOf(answer)?.type], name).toEqual([404, 'HTTPError'])
    }
    // Paths that are not app/deployment/method, or names no app has.
    for (const path of [
      'handleBatch',
      'BatchAdder/handleBatch',
      'default/BatchAdder/handleBatch/extra',
      'default/BatchAdder/',
      'default/__proto__/toString',
      'default/constructor/call',
      '__proto__/BatchAdder/handleBatch',
      'default/Object/toString',
      '..%2Fdefault/BatchAdder/handleBatch',
    ]) {
      const answer = await send(withRpc.url, {
        method: 'POST',
        path: `/-/rpc/${path}`,
        body: '{"args":[1]}',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      })
      expect([answer.status, errorOf(answer)?.type], path).toEqual([404, 'HTTPError'])
    }
    // Malformed percent-encoding is the caller's error, not a 500.
    const garbled = await call('%E0%A4%A')
    expect([garbled.status, errorOf(garbled)?.type]).toEqual([400, 'HTTPError'])
    // Bodies that are not {"args": [...]}.
    for (const body of ['{"args": 1}', '{"args": {"0": 1}}', '{"args": "41"}', 'not json', '{"args": [', '\u0000']) {
      const answer = await call('handleBatch', body)
      expect(answer.status, body).toBe(400)
    }
    const get = await send(withRpc.url, { path: '/-/rpc/default/BatchAdder/handleBatch', headers: { authorization: `Bearer ${TOKEN}` } })
    expect(get.status).toBe(405)
  })
})

describe('the remote RPC route', () => {
  it('is off by default: 404, token or not', async () => {
    for (const headers of [{}, { authorization: `Bearer ${TOKEN}` }, { authorization: 'Bearer ' }] as Record<string, string>[]) {
      const answer = await send(plain.url, {
        method: 'POST',
        path: '/-/rpc/default/BatchAdder/handleBatch',
        body: '{"args":[1]}',
        headers: { 'content-type': 'application/json', ...headers },
      })
      expect(answer.status).toBe(404)
    }
  })

  it('refuses a missing or wrong token with 401, before reading the body', async () => {
    const wrong = [
      undefined,
      '',
      'Bearer',
      'Bearer ',
      `bearer ${TOKEN}`,
      `Bearer  ${TOKEN}`,
      `Bearer ${TOKEN}x`,
      `Bearer ${TOKEN.slice(0, -1)}`,
      `Basic ${Buffer.from(`user:${TOKEN}`).toString('base64')}`,
      TOKEN,
      `Token ${TOKEN}`,
      `Bearer ${TOKEN.toUpperCase()}`,
      `Bearer ${'x'.repeat(4000)}`,
    ]
    for (const authorization of wrong) {
      const headers: Record<string, string> = { 'content-type': 'application/json' }
      if (authorization !== undefined) headers.authorization = authorization
      const answer = await send(withRpc.url, { method: 'POST', path: '/-/rpc/default/BatchAdder/handleBatch', body: '{"args":[1]}', headers })
      expect([answer.status, errorOf(answer)?.type, answer.headers['www-authenticate']], String(authorization).slice(0, 30)).toEqual([
        401,
        'Unauthorized',
        'Bearer',
      ])
    }
    // A body declared at 100 MB and never sent: the 401 comes at once.
    const raw = await rawExchange(
      withRpc.url,
      `POST /-/rpc/default/BatchAdder/handleBatch HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${100 * 1024 * 1024}\r\n\r\n`,
      { first: Buffer.from('{"args":') },
    )
    expect(raw.status).toBe(401)
    recorder.scan(raw.body)
    recorder.fact('wrongTokensRefused', wrong.length + 1)
  })
})

describe('bodies over the limit get 413 before they are read whole', () => {
  const limits = [
    { route: '/predict', type: 'application/json', limit: 16 * 1024, auth: '' },
    { route: '/ocr/direction', type: 'image/png', limit: 5 * 1024 * 1024, auth: '' },
    { route: '/-/rpc/default/BatchAdder/handleBatch', type: 'application/json', limit: 1024 * 1024, auth: `Authorization: Bearer ${TOKEN}\r\n` },
  ]

  it('a declared Content-Length over the limit: 413 after a few bytes of a body that never comes', async () => {
    const seen: Record<string, { bytesSent: number; ms: number }> = {}
    for (const { route, type, auth } of limits) {
      const head = `POST ${route} HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\n${auth}Content-Length: ${1024 * 1024 * 1024}\r\n\r\n`
      const raw = await rawExchange(withRpc.url, head, { first: Buffer.alloc(1024, 0x20) })
      recorder.scan(raw.body)
      expect([raw.status, errorTypeIn(raw.body)], route).toEqual([413, 'HTTPError'])
      seen[route] = { bytesSent: raw.bytesSent, ms: Math.round(raw.ms) }
    }
    recorder.fact('declaredOneGigabyte', seen)
  })

  it('a chunked body that never ends: 413 once the limit passes, long before the sender stops', async () => {
    const seen: Record<string, { limit: number; bytesSentWhenRefused: number; ms: number }> = {}
    for (const { route, type, limit, auth } of limits) {
      const maxBytes = 200 * 1024 * 1024
      const head = `POST ${route} HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\n${auth}Transfer-Encoding: chunked\r\n\r\n`
      const raw = await rawExchange(withRpc.url, head, { chunked: true, chunkBytes: 16 * 1024, maxBytes })
      recorder.scan(raw.body)
      expect([raw.status, errorTypeIn(raw.body)], route).toEqual([413, 'HTTPError'])
      // Loopback socket buffers hold a few MB in flight; the server stopped reading near the limit.
      expect(raw.bytesSent, route).toBeLessThan(limit + 32 * 1024 * 1024)
      seen[route] = { limit, bytesSentWhenRefused: raw.bytesSent, ms: Math.round(raw.ms) }
    }
    recorder.fact('chunkedNeverEnding', seen)
    // The server is fine afterwards.
    expect((await send(withRpc.url, { path: '/adder?number=1' })).text).toBe('2')
    expect((await send(withRpc.url, { path: '/-/healthz', timeoutMs: 60_000 })).status).toBe(200)
  })

  it('no error body carries a stack trace or a file path', () => {
    expect(recorder.leaks).toEqual([])
  })
})
