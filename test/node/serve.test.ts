import { Hono } from 'hono'
import { execFile } from 'node:child_process'
import { once } from 'node:events'
import { Agent, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http'
import { createServer, type AddressInfo } from 'node:net'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { batch, deployment, getHandle, ingress, replicaContext, RequestCancelledError, RequestTimeoutError, type DeploymentHandle } from '../../src/index.js'
import { getDeploymentHandle, serve, type RunningServer, type ServeOptions } from '../../src/runtime/node/index.js'
import { BatchAdder } from '../../examples/adder/batch-adder.js'
import { answeredWithin5s } from '../support/answered-within.js'
import { deferred } from '../support/deferred.js'
import { ROOT } from '../support/spawn-server.js'

const run = promisify(execFile)

// --- deployments used by these tests --------------------------------------

const seenByHandler: number[] = []
let gate = deferred()

class Gated {
  handle = batch(async (xs: number[]) => {
    seenByHandler.push(...xs)
    await gate.promise
    return xs.map((x) => x * 10)
  })

  async fetch(request: Request) {
    return String(await this.handle(Number(new URL(request.url).searchParams.get('x'))))
  }
}

class Hangs {
  calls = 0
  handle = batch(async (xs: number[]) => {
    if (this.calls++ === 0) await new Promise(() => undefined) // the first batch never finishes
    return xs
  })

  async fetch(request: Request) {
    return String(await this.handle(Number(new URL(request.url).searchParams.get('x'))))
  }
}

/**
 * Waits outside any batch queue: its first request on a promise that never
 * settles, and `wait()` always. Only the replica's own deadline (or a
 * caller's cancel) can end them.
 */
let stallsWaiting = 0
class Stalls {
  calls = 0

  async fetch(request: Request) {
    if (this.calls++ === 0) await new Promise(() => undefined)
    return new URL(request.url).searchParams.get('x')
  }

  wait(): Promise<never> {
    stallsWaiting++
    return new Promise(() => undefined)
  }
}
const stalls = deployment(Stalls, { requestTimeoutS: 0.3 })

/**
 * Batches whole requests (Ray's `batching_config`); a batch with a `?hang`
 * request never finishes. Only the batch queue watches these requests'
 * deadlines.
 */
class StallsBatched {
  async fetch(requests: Request[]): Promise<string[]> {
    const params = requests.map((request) => new URL(request.url).searchParams)
    if (params.some((p) => p.has('hang'))) await new Promise(() => undefined)
    return params.map((p) => p.get('x')!)
  }
}

/**
 * Awaits a door before its batched call: while it waits, nothing listens
 * for the client's disconnect, so the signal is only made once the call
 * reaches the queue, possibly after the client has gone.
 */
const arrivedAtDoor: number[] = []
const seenPastDoor: number[] = []
let door = deferred()
class BehindDoor {
  handle = batch(async (xs: number[]) => {
    seenPastDoor.push(...xs)
    return xs
  })

  async fetch(request: Request) {
    const x = Number(new URL(request.url).searchParams.get('x'))
    arrivedAtDoor.push(x)
    await door.promise
    return String(await this.handle(x))
  }
}

/** Counts its runs: a handle call cancelled before it starts must not run it. */
let calleeRuns = 0
class Callee {
  run(): string {
    calleeRuns++
    return 'ran'
  }
}
const callee = deployment(Callee)

/** Awaits a door, then calls Callee through a handle: a child of its request. */
let callerArrived = 0
let callerDoor = deferred()
class CallsAfterDoor {
  constructor(private readonly callee: DeploymentHandle<Callee>) {}

  async fetch() {
    callerArrived++
    await callerDoor.promise
    return this.callee.run.remote()
  }
}

class Sleepy {
  async fetch(request: Request) {
    await new Promise((resolve) => setTimeout(resolve, Number(new URL(request.url).searchParams.get('ms'))))
    return 'ok'
  }
}

class WhoAmI {
  readonly replica = replicaContext().replica
  async fetch() {
    await new Promise((resolve) => setTimeout(resolve, 20))
    return { replica: this.replica }
  }
}

class Leaky {
  async fetch(): Promise<string> {
    throw new Error('ENOENT: /srv/secret/config.json')
  }
}

class Guarded {
  secret = 'x'
  _private() {
    return 'private'
  }
  get computed() {
    return 'getter'
  }
  visible(x: number) {
    return x + 1
  }
}

const adder = deployment(BatchAdder).bind({ workMs: 40 })
/**
 * Responses whose connection closed, by path, as the server saw them: a test
 * that hangs up waits for the server to have seen it, not for a fixed time.
 * Listening to the response's own 'close' makes no disconnect signal, so it
 * changes nothing the tests look at.
 */
const closedResponses = new Map<string, number>()
const closedOn = (path: string) => closedResponses.get(path) ?? 0

const app = new Hono<{ Bindings: { incoming: IncomingMessage; outgoing: ServerResponse } }>()
  .use(async (c, next) => {
    const { pathname } = new URL(c.req.url)
    c.env.outgoing.once('close', () => closedResponses.set(pathname, closedOn(pathname) + 1))
    await next()
  })
  .get('/adder', ingress(adder))
  .get('/gated', ingress(deployment(Gated)))
  .get('/hangs', ingress(deployment(Hangs, { requestTimeoutS: 0.3 })))
  .get('/stalls', ingress(stalls))
  .get('/stalls-batched', ingress(deployment(StallsBatched, { requestTimeoutS: 0.3, batching: { maxBatchSize: 1, batchWaitTimeoutS: 0 } })))
  .get('/behind-door', ingress(deployment(BehindDoor)))
  .get('/calls-after-door', ingress(deployment(CallsAfterDoor).bind(callee)))
  .get('/single-slot', ingress(deployment(Guarded, { name: 'SingleSlot', maxOngoingRequests: 1, maxQueuedRequests: 1 })))
  .get('/busy', ingress(deployment(Sleepy, { maxOngoingRequests: 1, maxQueuedRequests: 1 })))
  .get('/who', ingress(deployment(WhoAmI, { numReplicas: 2 })))
  .get('/leaky', ingress(deployment(Leaky)))
  .get('/guarded', ingress(deployment(Guarded)))
  // The 'close' listeners of the connection this request came on.
  .get('/connection-listeners', (c) => c.text(String(c.env.incoming.socket.listenerCount('close'))))

let server: RunningServer
const TOKEN = 'test-token-0123456789'

beforeAll(async () => {
  server = await serve(app, { port: 0, name: 'test-app', handleSignals: false, rpcToken: TOKEN })
})
afterAll(async () => {
  await server.close()
})

const get = (path: string, init?: RequestInit) => fetch(server.url + path, init)

/** GET `path`, hang up once `arrived()` (an expectation) passes, and wait until the server has seen the hang-up. */
async function hangUpOnceArrived(path: string, arrived: () => void): Promise<void> {
  const { pathname } = new URL(path, server.url)
  const closedBefore = closedOn(pathname)
  const controller = new AbortController()
  const gone = get(path, { signal: controller.signal }).catch((e: unknown) => e)
  await vi.waitFor(arrived)
  controller.abort()
  await gone
  await vi.waitFor(() => expect(closedOn(pathname)).toBe(closedBefore + 1))
}

describe('serve() on a loopback port', () => {
  it("runs Ray Serve's batching tutorial: 9 concurrent requests give 1..9, in batches of at most 4", async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined)
    try {
      const responses = await Promise.all(Array.from({ length: 9 }, (_, i) => get(`/adder?number=${i}`)))
      const results = await Promise.all(responses.map(async (r) => Number.parseInt(await r.text(), 10)))
      expect(results).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9])
      expect(responses[0]!.headers.get('content-type')).toMatch(/^text\/plain/)
      const shapes = log.mock.calls
        .map((args) => /Our input array has shape: \((\d+),\)/.exec(String(args[0]))?.[1])
        .filter((s): s is string => s !== undefined)
        .map(Number)
      expect(shapes.reduce((a, b) => a + b, 0)).toBe(9)
      expect(Math.max(...shapes)).toBeLessThanOrEqual(4)
      expect(Math.max(...shapes)).toBeGreaterThan(1) // requests really were batched
    } finally {
      log.mockRestore()
    }
  })

  it('answers bad input with a 400 JSON error', async () => {
    const response = await get('/adder?number=abc')
    expect(response.status).toBe(400)
    expect(await response.json()).toEqual({
      error: { type: 'HTTPError', message: expect.stringContaining('"number" must be an integer') },
    })
  })

  it('refuses options it cannot use before anything starts, saying what to pass', async () => {
    // As a JavaScript caller may pass them: TypeScript would refuse each one.
    const refused = async (options: Record<string, unknown>) => {
      const error = await serve(new Hono(), { handleSignals: false, ...(options as ServeOptions) }).then(
        () => undefined,
        (e: Error) => e,
      )
      return error?.message
    }
    expect(await refused({ port: '8000' })).toBe('port must be a number from 0 to 65535, received the string "8000": pass Number("8000")')
    expect(await refused({ port: Number('http') })).toBe('port must be an integer from 0 to 65535, received NaN')
    expect(await refused({ port: 65536 })).toMatch(/^port must be an integer from 0 to 65535/)
    expect(await refused({ port: 0, hostname: 8000 })).toMatch(/^hostname must be the address to listen on, such as '127\.0\.0\.1'.* received 8000$/)
    expect(await refused({ port: 0, name: 42 })).toMatch(/^name must be a non-empty string.* received 42$/)
    expect(await refused({ port: 0, shutdownTimeoutS: -1 })).toBe('shutdownTimeoutS must be a number of seconds, 0 or more, received -1')
    expect(await refused({ port: 0, rpcToken: 5 })).toMatch(/^rpcToken must be a string, the token remote handles send/)
    expect(await refused({ port: 0, threads: true })).toMatch(/^threads must be \{ module: import\.meta\.url \}.* received true$/)
    expect(await refused({ port: 0, threads: {} })).toMatch(/its module is undefined$/)
    expect(await refused({ port: 0, deployments: [BatchAdder] })).toMatch(/^deployments must be an array of deployments made with deployment\(Class\)/)
    // What JavaScript apps write to mean "off" is still taken as off.
    const off = await serve(app, { port: 0, name: 'options-off', handleSignals: false, threads: false as never, rpcToken: '' })
    try {
      expect((await fetch(`${off.url}/-/rpc/options-off/BatchAdder/handleBatch`, { method: 'POST', body: '{"args":[1]}' })).status).toBe(404)
      expect(await (await fetch(`${off.url}/adder?number=1`)).text()).toBe('2')
    } finally {
      await off.close()
    }
  })

  it('refuses threads.deployments that names a deployment the app does not serve', async () => {
    const error = await serve(app, {
      port: 0,
      name: 'threads-typo',
      handleSignals: false,
      threads: { module: import.meta.url, deployments: ['BatchAdd'] },
    }).then(
      () => undefined,
      (e: Error) => e,
    )
    expect(error?.message).toMatch(/^threads\.deployments names "BatchAdd", which this app does not serve \(it serves: "BatchAdder"/)
  })

  it('leaves nothing behind when the port is taken: the same app can be served again', async () => {
    const holder = createServer().listen(0, '127.0.0.1')
    await once(holder, 'listening')
    try {
      const { port } = holder.address() as AddressInfo
      await expect(serve(app, { port, name: 'port-taken', handleSignals: false })).rejects.toThrow(/EADDRINUSE/)
      expect(() => getDeploymentHandle('BatchAdder', { app: 'port-taken' })).toThrow(/no app named "port-taken"/)
      const again = await serve(app, { port: 0, name: 'port-taken', handleSignals: false })
      await again.close()
    } finally {
      holder.close()
    }
  })

  it('close() resolves once the app is no longer served: the same app can be served again at once', async () => {
    const first = await serve(app, { port: 0, name: 'served-again', handleSignals: false })
    expect(await (await fetch(`${first.url}/adder?number=1`)).text()).toBe('2') // a kept-alive connection to close
    await first.close()
    expect(() => getDeploymentHandle('BatchAdder', { app: 'served-again' })).toThrow(/no app named "served-again"/)
    const again = await serve(app, { port: 0, name: 'served-again', handleSignals: false })
    await again.close()
  })

  it('serves handles in-process, by name and app', async () => {
    const handle = getDeploymentHandle<BatchAdder>('BatchAdder', { app: 'test-app' })
    const sums = await Promise.all([1, 2, 3].map((n) => handle.handleBatch.remote(n)))
    expect(sums).toEqual([2, 3, 4])
    expect(await handle.handleBatch.remote(10).result({ timeoutS: 5 })).toBe(11)
    expect(() => getDeploymentHandle('Nope', { app: 'test-app' })).toThrow(/has no deployment "Nope" \(it has: "BatchAdder"/)
    expect(() => getDeploymentHandle('BatchAdder', { app: 'other' })).toThrow(/no app named "other"/)
  })

  it('a handle only calls methods the class declares', async () => {
    const handle = getHandle(deployment(Guarded), server.app.env) as unknown as Record<string, { remote(...a: unknown[]): Promise<unknown> }>
    expect(await handle.visible!.remote(1)).toBe(2)
    for (const name of ['constructor', '_private', '__proto__', 'toString', 'hasOwnProperty', 'computed', 'secret', 'missing']) {
      await expect(handle[name]!.remote(), name).rejects.toThrow(/cannot be called through a handle/)
    }
  })

  it('a client that disconnects leaves the queue before the handler sees its item', async () => {
    gate = deferred()
    seenByHandler.length = 0
    const first = get('/gated?x=1') // occupies the batch slot
    await vi.waitFor(() => expect(seenByHandler).toEqual([1]))
    const closedBefore = closedOn('/gated')
    const controller = new AbortController()
    const second = get('/gated?x=2', { signal: controller.signal }).catch((e: unknown) => e)
    await new Promise((resolve) => setTimeout(resolve, 100)) // it is queued now
    controller.abort()
    await second
    await vi.waitFor(() => expect(closedOn('/gated')).toBe(closedBefore + 1)) // the server has seen the hang-up
    gate.resolve()
    expect(await (await first).text()).toBe('10')
    const third = await get('/gated?x=3')
    expect(await third.text()).toBe('30')
    expect(seenByHandler).toEqual([1, 3])
  })

  it("a kept-alive connection's requests share one 'close' listener, and a hang-up after many answers on it still leaves the queue", async () => {
    // One connection for every request below.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    const sockets = new Set<unknown>()
    const send = (path: string) =>
      new Promise<{ text: Promise<string>; destroy: () => void }>((resolve, reject) => {
        const req = httpRequest(server.url + path, { agent }, (res) => {
          res.setEncoding('utf8')
          let body = ''
          res.on('data', (chunk: string) => (body += chunk))
          resolve({ text: new Promise((done) => res.on('end', () => done(body))), destroy: () => req.destroy() })
        })
        req.on('socket', (socket) => sockets.add(socket))
        req.on('error', reject)
        req.end()
      })
    try {
      const listeners = async () => Number(await (await send('/connection-listeners')).text)
      // Each /adder call waits in a batch queue, so each makes a disconnect signal.
      expect(await (await send('/adder?number=1')).text).toBe('2')
      const afterOne = await listeners()
      for (let i = 0; i < 20; i++) expect(await (await send(`/adder?number=${i}`)).text).toBe(String(i + 1))
      expect(await listeners()).toBe(afterOne)

      gate = deferred()
      seenByHandler.length = 0
      const first = get('/gated?x=1') // another connection: it holds the batch slot
      await vi.waitFor(() => expect(seenByHandler).toEqual([1]))
      const closedBefore = closedOn('/gated')
      const queued = httpRequest(server.url + '/gated?x=2', { agent })
      queued.on('error', () => undefined)
      queued.end()
      await new Promise((resolve) => setTimeout(resolve, 100)) // it is queued now
      queued.destroy()
      await vi.waitFor(() => expect(closedOn('/gated')).toBe(closedBefore + 1))
      gate.resolve()
      expect(await (await first).text()).toBe('10')
      expect(await (await get('/gated?x=3')).text()).toBe('30')
      expect(seenByHandler).toEqual([1, 3]) // the hung-up call left the queue unseen
      expect(sockets.size).toBe(1)
    } finally {
      agent.destroy()
    }
  })

  it('answers 503 with Retry-After when a deployment is at capacity', async () => {
    const responses = await Promise.all(Array.from({ length: 5 }, () => get('/busy?ms=300')))
    const statuses = responses.map((r) => r.status).sort()
    expect(statuses.filter((s) => s === 200).length).toBe(2) // one running, one queued
    expect(statuses.filter((s) => s === 503).length).toBe(3)
    const refused = responses.find((r) => r.status === 503)!
    expect(refused.headers.get('retry-after')).toBe('1')
    expect(await refused.json()).toMatchObject({ error: { type: 'BackPressureError' } })
  })

  it('answers 504 past requestTimeoutS, and the replica serves again', async () => {
    const started = Date.now()
    const response = await get('/hangs?x=1')
    expect(response.status).toBe(504)
    expect(await response.json()).toMatchObject({ error: { type: 'RequestTimeoutError' } })
    expect(Date.now() - started).toBeLessThan(3000)
    const next = await get('/hangs?x=2')
    expect(next.status).toBe(200)
    expect(await next.text()).toBe('2')
  })

  it('answers 504 past requestTimeoutS when fetch() waits outside any batch queue', async () => {
    // The client's own limit turns a request nobody answers into a failure
    // that names it, rather than the test's timeout.
    const response = await get('/stalls?x=1', { signal: AbortSignal.timeout(5000) })
    expect(response.status).toBe(504)
    expect(await response.json()).toMatchObject({ error: { type: 'RequestTimeoutError' } })
    const next = await get('/stalls?x=2')
    expect(await next.text()).toBe('2')
  })

  it('answers 504 past requestTimeoutS when a batched fetch() never finishes, to each request it holds or keeps waiting', async () => {
    const stalled = ['1', '2'].map((x) => get(`/stalls-batched?x=${x}&hang`, { signal: AbortSignal.timeout(5000) }))
    for (const response of await Promise.all(stalled)) {
      expect(response.status).toBe(504)
      expect(await response.json()).toMatchObject({ error: { type: 'RequestTimeoutError' } })
    }
    const next = await get('/stalls-batched?x=3')
    expect(await next.text()).toBe('3')
  })

  it("a handle call fails with RequestTimeoutError past the callee's requestTimeoutS", async () => {
    const handle = getHandle(stalls, server.app.env)
    // Not result({ timeoutS }): that fails with RequestTimeoutError itself.
    await expect(answeredWithin5s(handle.wait.remote())).rejects.toBeInstanceOf(RequestTimeoutError)
  })

  it('a handle call cancelled while its method runs fails with RequestCancelledError at once', async () => {
    const handle = getHandle(stalls, server.app.env)
    const before = stallsWaiting
    const response = handle.wait.remote()
    await vi.waitFor(() => expect(stallsWaiting).toBe(before + 1))
    response.cancel()
    // Cancelled, not timed out: the callee's 0.3 s deadline has not passed.
    await expect(response).rejects.toBeInstanceOf(RequestCancelledError)
  })

  it('a client that disconnected before its request reached a batch queue is refused there', async () => {
    door = deferred()
    arrivedAtDoor.length = 0
    seenPastDoor.length = 0
    await hangUpOnceArrived('/behind-door?x=7', () => expect(arrivedAtDoor).toEqual([7]))
    door.resolve()
    expect(await (await get('/behind-door?x=8')).text()).toBe('8')
    expect(seenPastDoor).toEqual([8])
  })

  it('a handle call made for a request whose client has gone is cancelled before its method runs', async () => {
    callerDoor = deferred()
    callerArrived = 0
    calleeRuns = 0
    await hangUpOnceArrived('/calls-after-door', () => expect(callerArrived).toBe(1))
    callerDoor.resolve()
    const served = await get('/calls-after-door')
    expect(await served.text()).toBe('ran')
    expect(calleeRuns).toBe(1)
  })

  it('a handle call gives its replica back: one slot serves calls one after another', async () => {
    const handle = getDeploymentHandle<Guarded>('SingleSlot', { app: 'test-app' })
    for (const x of [1, 2, 3]) expect(await answeredWithin5s(handle.visible.remote(x))).toBe(x + 1)
  })

  it('numReplicas: 2 spreads load over both replicas', async () => {
    const responses = await Promise.all(Array.from({ length: 24 }, () => get('/who').then((r) => r.json())))
    const replicas = new Set(responses.map((r) => (r as { replica: number }).replica))
    expect(replicas).toEqual(new Set([0, 1]))
  })

  it('never shows a stack trace or a file path in an error', async () => {
    const error = vi.spyOn(console, 'error').mockImplementation(() => undefined)
    try {
      const response = await get('/leaky')
      expect(response.status).toBe(500)
      const text = await response.text()
      expect(text).not.toMatch(/secret|\/srv|at .*\(|\.ts/)
      expect(JSON.parse(text)).toEqual({
        error: { type: 'InternalServerError', message: 'an internal error occurred while handling this request' },
      })
    } finally {
      error.mockRestore()
    }
  })

  it('/-/healthz is 503 while a replica fails its checkHealth(), 200 once it passes', async () => {
    let ready = false
    class Warming {
      checkHealth() {
        if (!ready) throw new Error('model still loading')
        return true
      }
      async fetch() {
        return 'ok'
      }
    }
    const warming = await serve(new Hono().get('/w', ingress(deployment(Warming))), { port: 0, name: 'warming', handleSignals: false })
    try {
      const down = await fetch(`${warming.url}/-/healthz`)
      expect(down.status).toBe(503)
      expect(await down.json()).toMatchObject({
        status: 'unhealthy',
        replicas: [{ deployment: 'Warming', replica: 0, healthy: false, message: 'model still loading' }],
      })
      ready = true
      expect((await fetch(`${warming.url}/-/healthz`)).status).toBe(200)
    } finally {
      await warming.close()
    }
  })

  it('handle results honour result({ timeoutS })', async () => {
    class Forever {
      wait() {
        return new Promise(() => undefined)
      }
    }
    const forever = deployment(Forever)
    const extra = await serve(new Hono(), { port: 0, name: 'forever', deployments: [forever], handleSignals: false })
    try {
      const handle = getDeploymentHandle<Forever>('Forever', { app: 'forever' })
      await expect(handle.wait.remote().result({ timeoutS: 0.1 })).rejects.toBeInstanceOf(RequestTimeoutError)
    } finally {
      await extra.close()
    }
  })
})

describe('remote handles (edgeserve/client)', () => {
  it('calls a deployment from a separate Node process, and refuses a wrong token', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'test/node/fixtures/remote-client.ts', server.url, TOKEN, 'test-app'], {
      cwd: ROOT,
      timeout: 30_000,
    })
    const { results, refused } = JSON.parse(stdout.trim().split('\n').at(-1)!) as { results: number[]; refused: string }
    expect(results).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9])
    expect(refused).toMatch(/^401 /)
  })

  it('the RPC route refuses a missing token with 401 and undeclared methods with 404', async () => {
    const call = (method: string, headers: Record<string, string>) =>
      get(`/-/rpc/test-app/Guarded/${method}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ args: [1] }),
      })
    expect((await call('visible', {})).status).toBe(401)
    expect((await call('visible', { authorization: 'Bearer nope' })).status).toBe(401)
    const ok = await call('visible', { authorization: `Bearer ${TOKEN}` })
    expect(await ok.json()).toEqual({ value: 2 })
    for (const name of ['constructor', '__proto__', '_private', 'toString']) {
      expect((await call(name, { authorization: `Bearer ${TOKEN}` })).status, name).toBe(404)
    }
  })

  it('the RPC route is off unless a token is given', async () => {
    const plain = await serve(app, { port: 0, name: 'no-rpc', handleSignals: false })
    try {
      const response = await fetch(`${plain.url}/-/rpc/no-rpc/BatchAdder/handleBatch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify({ args: [1] }),
      })
      expect(response.status).toBe(404)
    } finally {
      await plain.close()
    }
  })
})
