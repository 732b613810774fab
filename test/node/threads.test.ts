import { availableParallelism } from 'node:os'
import { threadId } from 'node:worker_threads'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { getDeploymentHandle, serve, type RunningServer } from '../../src/runtime/node/index.js'
import type { DeploymentHandle } from '../../src/index.js'
import { app, bodyLengthRequestsSeen } from './fixtures/thread-app.js'
import { spawnServer } from '../support/spawn-server.js'
import { waitFor } from '../support/wait-for.js'
import { answeredWithin5s } from '../support/answered-within.js'
import { RawConnection } from '../support/raw-connection.js'

interface Doubled {
  replica: number
  threadId: number
  value: number
  echo: string
}

/** The fixture app on a loopback port as `name`, with the deployments `onThreads` names (default: all) on worker threads. */
const serveThreadApp = (name: string, onThreads?: string[]) =>
  serve(app, {
    port: 0,
    name,
    handleSignals: false,
    threads: { module: new URL('./fixtures/thread-app.ts', import.meta.url), ...(onThreads ? { deployments: onThreads } : {}) },
  })

let server: RunningServer

beforeAll(async () => {
  server = await serveThreadApp('threads-test')
})

afterAll(async () => {
  await server?.close()
})

/** `deployment`'s requests so far, by the status they were answered (summed over replicas), from /-/metrics.json. */
async function requestsByStatus(deployment: string): Promise<Map<string, number>> {
  const metrics = (await (await fetch(`${server.url}/-/metrics.json`)).json()) as {
    metrics: { name: string; samples: { labels: Record<string, string>; value?: number }[] }[]
  }
  const counts = new Map<string, number>()
  for (const sample of metrics.metrics.find((m) => m.name === 'edgeserve_requests_total')!.samples) {
    if (sample.labels.deployment !== deployment || sample.labels.status === undefined) continue
    counts.set(sample.labels.status, (counts.get(sample.labels.status) ?? 0) + (sample.value ?? 0))
  }
  return counts
}

type Gate = DeploymentHandle<{ open(): void; queued(): number; seenItems(): number[] }>
const gateHandle = (name: string): Gate => getDeploymentHandle(name, { app: 'threads-test' })

/**
 * GET `path?x=1`, whose call to `gate` starts a batch that waits for the
 * gate, then `path?x=2`, whose call queues behind it, and hang up on the
 * second: resolves once that call has left the gate's queue, with the first
 * request's response still to come.
 */
async function abortCallQueuedBehindGate(gate: Gate, path: string): Promise<{ first: Promise<Response> }> {
  const first = fetch(`${server.url}${path}?x=1`)
  await waitFor(async () => (await gate.seenItems.remote()).length === 1, 'the first batch')
  const controller = new AbortController()
  const second = fetch(`${server.url}${path}?x=2`, { signal: controller.signal })
  second.catch(() => undefined)
  await waitFor(async () => (await gate.queued.remote()) === 1, 'the second call to queue')
  controller.abort()
  await expect(second).rejects.toThrow()
  await waitFor(async () => (await gate.queued.remote()) === 0, 'the aborted call to leave the queue')
  return { first }
}

describe('serve({ threads })', () => {
  it('serves from two thread replicas, with correct results', async () => {
    const xs = Array.from({ length: 24 }, (_, i) => i)
    const answers = await Promise.all(
      xs.map(async (x) => {
        const response = await fetch(`${server.url}/double?x=${x}`, { method: 'POST', body: `body-${x}` })
        expect(response.status).toBe(200)
        return (await response.json()) as Doubled
      }),
    )
    expect(answers.map((a) => a.value)).toEqual(xs.map((x) => x * 2))
    expect(answers.map((a) => a.echo)).toEqual(xs.map((x) => `body-${x}`))
    expect(new Set(answers.map((a) => a.replica))).toEqual(new Set([0, 1]))
    const threads = new Set(answers.map((a) => a.threadId))
    expect(threads.size).toBe(2)
    expect(threads.has(threadId)).toBe(false)
  })

  it('answers a plain value from a thread as in process: its status, content type and bytes', async () => {
    const get = async (kind: string) => {
      const response = await fetch(`${server.url}/answers?kind=${kind}`)
      return { status: response.status, type: response.headers.get('content-type'), bytes: [...new Uint8Array(await response.arrayBuffer())] }
    }
    const utf8 = (text: string) => [...new TextEncoder().encode(text)]
    expect(await get('text')).toEqual({ status: 200, type: 'text/plain; charset=utf-8', bytes: utf8('hello') })
    expect(await get('json')).toEqual({ status: 200, type: 'application/json', bytes: utf8('{"a":1,"text":"é"}') })
    expect(await get('none')).toMatchObject({ status: 204, bytes: [] })
    // A view answers its own bytes, not its whole buffer's.
    expect(await get('bytes')).toEqual({ status: 200, type: 'application/octet-stream', bytes: [2, 3] })
    // Sending a Buffer must not take the pool it shares with the thread's other Buffers: the second still answers.
    expect(await get('buffer')).toEqual({ status: 200, type: 'application/octet-stream', bytes: utf8('pooled') })
    expect(await get('buffer')).toEqual({ status: 200, type: 'application/octet-stream', bytes: utf8('pooled') })
    // An ArrayBuffer the instance keeps is still whole when it answers with it again.
    expect(await get('kept')).toEqual({ status: 200, type: 'application/octet-stream', bytes: [9, 8, 7] })
    expect(await get('kept')).toEqual({ status: 200, type: 'application/octet-stream', bytes: [9, 8, 7] })
    // A Response goes as it is.
    expect(await get('response')).toEqual({ status: 202, type: 'application/json', bytes: utf8('{"kind":"response"}') })
  })

  it('readBody() on a thread answers the posted bytes, and refuses a body over its limit with 413', async () => {
    const echoed = await fetch(`${server.url}/answers/echo`, { method: 'POST', body: new Uint8Array([0, 1, 254, 255]) })
    expect(echoed.status).toBe(200)
    expect([...new Uint8Array(await echoed.arrayBuffer())]).toEqual([0, 1, 254, 255])
    // Streamed, so that no Content-Length refuses it before the limit is checked against the bytes themselves.
    const chunked = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('x'.repeat(17)))
        controller.close()
      },
    })
    const tooLarge = await fetch(`${server.url}/answers/echo`, { method: 'POST', body: chunked, duplex: 'half' } as RequestInit)
    expect(tooLarge.status).toBe(413)
    expect(((await tooLarge.json()) as { error: { type: string } }).error.type).toBe('HTTPError')
  })

  describe('request bodies: a small one crosses whole, a large one as the thread reads it; neither outlasts the request', () => {
    const head = (path: string, headers: string) => `POST ${path} HTTP/1.1\r\nhost: edgeserve.test\r\n${headers}\r\n`
    /** A body of 100 bytes declared (read whole on the server's thread), and one of unknown length (read as the thread asks). */
    const unfinished = {
      small: head('/body-length', 'content-length: 100\r\n') + 'x'.repeat(10),
      chunked: head('/body-length', 'transfer-encoding: chunked\r\n') + `a\r\n${'x'.repeat(10)}\r\n`,
    }

    it('a declared length past the limit is a 413 before any byte of the body is sent', async () => {
      const connection = await RawConnection.open(server.url)
      try {
        await connection.send(head('/answers/echo', 'content-length: 1000000\r\n'))
        expect((await connection.next(5000)).status).toBe(413)
      } finally {
        connection.close()
      }
    })

    it('a chunked body is refused at the limit while its client is still sending it', async () => {
      const connection = await RawConnection.open(server.url)
      try {
        // One chunk of 32 bytes, past the 16 the route reads, and no last chunk.
        await connection.send(head('/answers/echo', 'transfer-encoding: chunked\r\n') + `20\r\n${'x'.repeat(32)}\r\n`)
        expect((await connection.next(5000)).status).toBe(413)
      } finally {
        connection.close()
      }
    })

    it.each(Object.keys(unfinished) as (keyof typeof unfinished)[])('a %s body that never ends is answered 504 at the request deadline', async (kind) => {
      const before = await requestsByStatus('BodyLength')
      const connection = await RawConnection.open(server.url)
      try {
        await connection.send(unfinished[kind])
        const answer = await connection.next(5000)
        expect([answer.status, JSON.parse(answer.body)]).toMatchObject([504, { error: { type: 'RequestTimeoutError' } }])
      } finally {
        connection.close()
      }
      // The thread, told by the server to stop, records why: the deadline, not a client that left.
      const after = await requestsByStatus('BodyLength')
      expect([after.get('504') ?? 0, after.get('499') ?? 0]).toEqual([(before.get('504') ?? 0) + 1, before.get('499') ?? 0])
      const whole = await fetch(`${server.url}/body-length`, { method: 'POST', body: 'y'.repeat(100) })
      expect(await whole.json()).toEqual({ bytes: 100 })
    })

    it.each(Object.keys(unfinished) as (keyof typeof unfinished)[])(
      'a client that leaves mid-body (%s) is a cancelled request (499), not an error in the log',
      async (kind) => {
        const errors = vi.spyOn(console, 'error')
        try {
          const cancelled = async () => (await requestsByStatus('BodyLength')).get('499') ?? 0
          const [before, seen] = [await cancelled(), bodyLengthRequestsSeen()]
          const connection = await RawConnection.open(server.url)
          await connection.send(unfinished[kind])
          await waitFor(() => bodyLengthRequestsSeen() === seen + 1, 'the server to begin serving the request')
          connection.reset()
          await waitFor(async () => (await cancelled()) === before + 1, 'the request to count as cancelled')
          expect(errors.mock.calls.filter((call) => /unhandled error/.test(String(call[0])))).toEqual([])
        } finally {
          errors.mockRestore()
        }
      },
    )
  })

  it('reports thread replicas on /-/metrics.json, /-/healthz and /-/routes', async () => {
    const health = (await (await fetch(`${server.url}/-/healthz`)).json()) as { status: string; replicas: { deployment: string }[] }
    expect(health.status).toBe('ok')
    expect(health.replicas.filter((r) => r.deployment === 'Doubler')).toHaveLength(2)

    const metrics = (await (await fetch(`${server.url}/-/metrics.json`)).json()) as {
      metrics: { name: string; samples: { labels: Record<string, string>; value?: number; count?: number }[] }[]
    }
    const requests = metrics.metrics.find((m) => m.name === 'edgeserve_requests_total')!
    const byReplica = new Map<string, number>()
    for (const sample of requests.samples) {
      if (sample.labels.deployment !== 'Doubler') continue
      byReplica.set(sample.labels.replica!, (byReplica.get(sample.labels.replica!) ?? 0) + (sample.value ?? 0))
    }
    expect([...byReplica.keys()].sort()).toEqual(['0', '1'])
    expect([...byReplica.values()].reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(24)

    const routes = (await (await fetch(`${server.url}/-/routes`)).json()) as {
      deployments: { name: string; batchedMethods: Record<string, unknown> }[]
    }
    expect(Object.keys(routes.deployments.find((d) => d.name === 'Doubler')!.batchedMethods)).toContain('double')
  })

  it('carries a client abort into the thread: the aborted call leaves the queue unseen', async () => {
    const gated = gateHandle('Gated')
    const { first } = await abortCallQueuedBehindGate(gated, '/gated')
    await gated.open.remote()
    expect(await (await first).text()).toBe('10')
    expect(await gated.seenItems.remote()).toEqual([1])
  })

  it("a replica that holds its thread leaves the server's thread free: a plain route answers meanwhile", async () => {
    // A model run on a replica's thread holds that thread, not the one that
    // reads HTTP. Probe a plain route every 25 ms while a replica holds its
    // thread for a second: probes answered inside that second show the
    // server's thread kept serving (served in process, none would be).
    const held = fetch(`${server.url}/busy?ms=1000`).then((r) => r.json() as Promise<{ startedAt: number; endedAt: number; threadId: number }>)
    let done = false
    void held.finally(() => (done = true))
    const answeredAt: number[] = []
    while (!done) {
      const response = await fetch(`${server.url}/plain`)
      expect(await response.text()).toBe('ok')
      answeredAt.push(Date.now())
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    const { startedAt, endedAt, threadId: busyThread } = await held
    expect(busyThread).not.toBe(threadId)
    const answeredWhileHeld = answeredAt.filter((at) => at > startedAt && at < endedAt)
    expect(answeredWhileHeld.length).toBeGreaterThanOrEqual(10)
  })

  it('relays an event stream from a thread as it is written, not once it ends', async () => {
    // The second event waits for release(): the head and the first event
    // must arrive before it.
    const opened = answeredWithin5s(
      (async () => {
        const response = await fetch(`${server.url}/ticker`)
        const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
        return { type: response.headers.get('content-type'), reader, first: await reader.read() }
      })(),
    )
    const got = await opened
    if (got === 'no answer in 5 s') throw new Error('the event stream sent nothing before its end')
    const { type, reader, first } = got
    expect(type).toBe('text/event-stream')
    expect(first).toEqual({ value: 'data: first\n\n', done: false })
    await getDeploymentHandle<{ release(): void }>('Ticker', { app: 'threads-test' }).release.remote()
    let rest = ''
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += chunk.value
    expect(rest).toBe('data: second\n\n')
  })

  it('an event stream whose head has gone outlives the request deadline, as in process', async () => {
    // TickerWithDeadline's requestTimeoutS is 0.3: the second event comes after it. Its thread is started first,
    // so that the deadline is not spent starting it.
    const ticker = getDeploymentHandle<{ release(): void; warm(): void }>('TickerWithDeadline', { app: 'threads-test' })
    await ticker.warm.remote()
    const response = await fetch(`${server.url}/ticker-with-deadline`)
    expect(response.status).toBe(200)
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
    expect(await reader.read()).toEqual({ value: 'data: first\n\n', done: false })
    await new Promise((resolve) => setTimeout(resolve, 600))
    await ticker.release.remote()
    const rest = answeredWithin5s(
      (async () => {
        let text = ''
        for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += chunk.value
        return text
      })(),
    )
    expect(await rest).toBe('data: second\n\n')
  })

  it('answers 504 at the request deadline while the replica still holds its thread, and serves again once it is free', async () => {
    // The thread cannot answer while it loops, so the deadline is kept on the
    // server's side: the 504 must come before the loop of `ms` has ended.
    const ms = 2000
    const sentAt = Date.now()
    const timedOut = await fetch(`${server.url}/busy-with-deadline?ms=${ms}`)
    const answeredAt = Date.now()
    expect(timedOut.status).toBe(504)
    expect(await timedOut.json()).toMatchObject({ error: { type: 'RequestTimeoutError' } })
    expect(answeredAt).toBeLessThan(sentAt + ms)
    // The thread's late answer to the timed-out request is dropped; the next
    // request, sent once the loop is over, gets its own.
    await new Promise((resolve) => setTimeout(resolve, sentAt + ms + 100 - Date.now()))
    const next = await fetch(`${server.url}/busy-with-deadline?ms=0`)
    expect(next.status).toBe(200)
    expect(await next.json()).toMatchObject({ threadId: expect.any(Number) })
  })

  it('a deployment on a thread calls the deployments bound into it, on threads of their own, whole and streamed', async () => {
    const answer = (await (await fetch(`${server.url}/compose?x=21`)).json()) as { value: number; doublerThread: number; counted: number[]; threadId: number }
    expect(answer.value).toBe(42)
    expect(answer.counted).toEqual([1, 2, 3])
    expect(answer.threadId).not.toBe(threadId)
    expect(answer.doublerThread).not.toBe(threadId)
    expect(answer.doublerThread).not.toBe(answer.threadId)
  })

  it("a client's abort reaches a call that a thread's deployment made to another: it leaves that queue", async () => {
    // The client hangs up on the composer (a thread), whose request is
    // waiting for its call to ComposerGate (another thread), queued behind a
    // held batch: the abort crosses to the composer's thread, its call is
    // cancelled there, and the cancellation crosses back through the server
    // to the gate's thread, where the call leaves the queue unseen.
    const gate = gateHandle('ComposerGate')
    const { first } = await abortCallQueuedBehindGate(gate, '/compose/gated')
    await gate.open.remote()
    expect(await (await first).json()).toEqual({ value: 10 })
    expect(await gate.seenItems.remote()).toEqual([1])
  })

  it('handle calls cross to the thread and back', async () => {
    const doubler = getDeploymentHandle<{ double(x: number): Promise<number> }>('Doubler', { app: 'threads-test' })
    expect(await Promise.all([1, 2, 3].map((x) => doubler.double.remote(x)))).toEqual([2, 4, 6])
  })

  it('a handle call that returns a stream crosses from the thread chunk by chunk, and leaving early stops it there', async () => {
    const handle = getDeploymentHandle<{ count(limit: number): AsyncIterableIterator<number>; steps(): number }>('Counter', {
      app: 'threads-test',
    })
    const whole: number[] = []
    for await (const step of handle.count.remote(5)) whole.push(step)
    expect(whole).toEqual([1, 2, 3, 4, 5])

    const before = await handle.steps.remote()
    const seen: number[] = []
    for await (const step of handle.count.remote(1000)) {
      seen.push(step)
      if (seen.length === 3) break
    }
    expect(seen).toEqual([1, 2, 3])
    // The generator in the thread stops soon after the reader left: far fewer than 1000 steps run.
    await new Promise((resolve) => setTimeout(resolve, 100))
    const ran = (await handle.steps.remote()) - before
    expect(ran).toBeGreaterThanOrEqual(3)
    expect(ran).toBeLessThan(100)
  })

  it('replicas on threads split the cores between their models: each loads with cores / replicas ORT threads', async () => {
    const handle = getDeploymentHandle<{ numThreads(): Promise<number> }>('ModelThreads', { app: 'threads-test' })
    const counts = await Promise.all([1, 2, 3, 4].map(() => handle.numThreads.remote()))
    expect(new Set(counts)).toEqual(new Set([Math.max(1, Math.floor(availableParallelism() / 2))]))
  })

  it('a TypeScript server run with node --import tsx serves from thread replicas', async () => {
    // Its replica threads load tsx and the app again, as a user's own server's threads would.
    const server = await spawnServer(['--import', 'tsx', 'test/node/fixtures/thread-server.ts'], { command: process.execPath })
    try {
      const answers = await Promise.all(
        [1, 2, 3, 4].map(async (x) => {
          const response = await fetch(`${server.url}/double?x=${x}`, { method: 'POST', body: `body-${x}` })
          return ((await response.json()) as { value: number }).value
        }),
      )
      expect(answers).toEqual([2, 4, 6, 8])
    } finally {
      expect(await server.stop()).toBe(0)
    }
  })
})

describe('serve({ threads: { deployments } }): a deployment on a thread composed of deployments in process', () => {
  let mixed: RunningServer

  beforeAll(async () => {
    mixed = await serveThreadApp('threads-compose-test', ['Composer'])
  })

  afterAll(async () => {
    await mixed?.close()
  })

  it('calls them through the server thread, where they run', async () => {
    const answer = (await (await fetch(`${mixed.url}/compose?x=4`)).json()) as { value: number; doublerThread: number; counted: number[]; threadId: number }
    expect(answer.value).toBe(8)
    expect(answer.counted).toEqual([1, 2, 3])
    expect(answer.threadId).not.toBe(threadId)
    expect(answer.doublerThread).toBe(threadId)
  })
})
