/**
 * The request context in a browser build, where `#batching-host` resolves to
 * src/batching/host/browser.ts (package.json's `browser` condition): this file
 * swaps that variant in for the whole module graph, as a browser bundle
 * does, and checks what its doc comment promises. The context follows a
 * replica method up to its first await; after it, a batched call is plain
 * unless it passes its own signal.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import { describe, expect, it, vi } from 'vitest'

vi.mock('#batching-host', () => import('../../../src/batching/host/browser.js'))

const { host } = await import('#batching-host')
const { batch, deployment, currentContext } = await import('../../../src/index.js')
const { Replica } = await import('../../../src/deployment/replica.js')

/** A batched method whose first batch waits for open(): calls behind it stay queued. */
function gatedBatch() {
  const seen: number[] = []
  let open = () => {}
  const gate = new Promise<void>((resolve) => (open = resolve))
  const fn = batch(async (xs: number[]) => {
    seen.push(...xs)
    await gate
    return xs
  })
  return { fn, seen, open: () => open() }
}

const x = (request: Request) => Number(new URL(request.url).searchParams.get('x'))
const tick = () => new Promise((resolve) => setTimeout(resolve, 5))
/** Let the replica's code run until `done()`: the methods await timers of their own before their batched call. */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await tick()
}
const get = (n: number) => new Request(`http://test.local/?x=${n}`)

class CallsBeforeAwaiting {
  readonly gated = gatedBatch()
  async fetch(request: Request) {
    return String(await this.gated.fn(x(request)))
  }
}

class CallsAfterAwaiting {
  readonly gated = gatedBatch()
  contextAfterAwait: unknown = 'unset'
  async fetch(request: Request) {
    const value = await Promise.resolve(x(request))
    this.contextAfterAwait = currentContext()
    return String(await this.gated.fn(value))
  }
}

/** As CallsAfterAwaiting, passing its own signal, as the doc comment tells a browser app to. */
class PassesItsSignal {
  readonly gated = gatedBatch()
  async fetch(request: Request) {
    const { signal } = currentContext() ?? {} // before the first await
    const value = await Promise.resolve(x(request))
    return String(await this.gated.fn(value, { signal }))
  }
}

/** Two requests: the first holds the batch slot, the second hangs up while its call waits. */
async function hangUpWhileQueued(cls: new () => { gated: ReturnType<typeof gatedBatch> }) {
  const replica = new Replica(deployment(cls, { name: cls.name }), 0)
  const { gated } = replica.instance() as { gated: ReturnType<typeof gatedBatch> }
  const first = replica.fetch(get(1), {})
  await until(() => gated.seen.length === 1)
  const hangUp = new AbortController()
  const second = replica.fetch(get(2), { signal: hangUp.signal })
  await until(() => gated.fn.stats().queueLength === 1)
  hangUp.abort()
  await tick()
  gated.open()
  return { first: await (await first).text(), second: (await second).status, seen: gated.seen, instance: replica.instance() }
}

describe('request context in a browser (no AsyncLocalStorage)', () => {
  it('the browser variant is the one in use', () => {
    const storage = host.contextStorage()
    expect(storage).not.toBeInstanceOf(AsyncLocalStorage)
    expect(storage.run({ origin: 'http' }, () => 2)).toBe(2)
  })

  it('a batched call made before the first await inherits the request signal: a hang-up takes it out of the queue', async () => {
    const { first, second, seen } = await hangUpWhileQueued(CallsBeforeAwaiting)
    expect([first, second]).toEqual(['1', 499])
    expect(seen).toEqual([1])
  })

  it('after an await the context is gone: the call is plain, and a hang-up does not take it out of the queue', async () => {
    const { first, second, seen, instance } = await hangUpWhileQueued(CallsAfterAwaiting)
    expect((instance as CallsAfterAwaiting).contextAfterAwait).toBeUndefined()
    // The hung-up request's call ran in the next batch, for nobody.
    expect([first, second]).toEqual(['1', 200])
    expect(seen).toEqual([1, 2])
  })

  it('a call after an await that passes the signal it took before the await leaves the queue on a hang-up', async () => {
    const { first, second, seen } = await hangUpWhileQueued(PassesItsSignal)
    expect([first, second]).toEqual(['1', 499])
    expect(seen).toEqual([1])
  })
})
