/**
 * How a request's context (signal, deadline, origin) follows user code into
 * the batch queue: a plain variable while the user's method runs
 * synchronously, the request a call names with `{ request }`, and
 * AsyncLocalStorage from the first batched call seen after an await without
 * it. The mode is process-wide, and vitest gives this file a fresh module
 * graph, so the tests run in order: synchronous first, then the switch.
 */
import { describe, expect, it } from 'vitest'
import { batch, currentRequest, deployment } from '../../../src/index.js'
import { contextTracking } from '../../../src/deployment/context.js'
import { Replica } from '../../../src/deployment/replica.js'
import { logged } from '../../support/logged.js'

/**
 * A batched method whose first batch waits for open(): calls behind it stay
 * queued. Its batch key is the call's origin, as the ambient context tells
 * it ('none' without one), and `keys` records the key of every batch.
 */
function gatedBatch() {
  const seen: number[] = []
  const keys: (string | undefined)[] = []
  let open = () => {}
  const gate = new Promise<void>((resolve) => (open = resolve))
  const fn = batch(
    async (xs: number[], info) => {
      seen.push(...xs)
      keys.push(info.key)
      await gate
      return xs
    },
    { batchKey: (_x, context) => context.origin ?? 'none' },
  )
  return { fn, seen, keys, open: () => open() }
}

class CallsBeforeAwaiting {
  readonly gated = gatedBatch()
  handle = this.gated.fn
  async fetch(request: Request) {
    return String(await this.handle(Number(new URL(request.url).searchParams.get('x'))))
  }
}

class CallsAfterAwaiting {
  readonly gated = gatedBatch()
  handle = this.gated.fn
  async fetch(request: Request) {
    const x = Number(await Promise.resolve(new URL(request.url).searchParams.get('x')))
    return String(await this.handle(x))
  }
}

/** As CallsAfterAwaiting, naming its request before the await. */
class NamesItsRequest {
  readonly gated = gatedBatch()
  handle = this.gated.fn
  async fetch(request: Request) {
    const call = currentRequest()
    const x = Number(await Promise.resolve(new URL(request.url).searchParams.get('x')))
    return String(await this.handle(x, { request: call }))
  }
}

const get = (x: number) => new Request(`http://test.local/?x=${x}`)
const tick = () => new Promise((resolve) => setTimeout(resolve, 5))

/**
 * Two requests to `replica`, whose class holds a gatedBatch() as `gated`:
 * the first holds the batch slot, the second hangs up while it waits in
 * the queue; then the gate opens. What each was answered, and the batch.
 */
async function hangUpWhileQueued(replica: Replica) {
  const first = replica.fetch(get(1), {})
  await tick()
  const hangUp = new AbortController()
  const second = replica.fetch(get(2), { signal: hangUp.signal })
  await tick()
  hangUp.abort()
  const { gated } = replica.instance() as { gated: ReturnType<typeof gatedBatch> }
  gated.open()
  return { first: await (await first).text(), second: (await second).status, gated }
}

describe('request context in the batch queue', () => {
  it('a batched call made before the first await gets the request signal without AsyncLocalStorage', async () => {
    const { first, second, gated } = await hangUpWhileQueued(new Replica(deployment(CallsBeforeAwaiting, { name: 'Before' }), 0))
    expect([first, second]).toEqual(['1', 499])
    expect(gated.seen).toEqual([1]) // the hung-up call left the queue unseen
    expect(gated.keys).toEqual(['http'])
    expect(contextTracking()).toBe('synchronous')
  })

  it('a batched call after an await that names its request gets its signal and origin without AsyncLocalStorage', async () => {
    const { first, second, gated } = await hangUpWhileQueued(new Replica(deployment(NamesItsRequest, { name: 'Named' }), 0))
    expect([first, second]).toEqual(['1', 499])
    expect(gated.seen).toEqual([1])
    expect(gated.keys).toEqual(['http'])
    expect(contextTracking()).toBe('synchronous')
  })

  it('a batched call after an await switches tracking to AsyncLocalStorage, says where, and later hang-ups still leave the queue', async () => {
    const replica = new Replica(deployment(CallsAfterAwaiting, { name: 'After' }), 0)
    // The only request in flight: it reveals the need, and still gets its own context.
    const lone = new AbortController()
    const { result, lines } = await logged(async () => {
      // Wrapped: an async function returning the pending answer would wait for it.
      const pending = { first: replica.fetch(get(1), { signal: lone.signal }) }
      await tick()
      return pending
    })
    const { first } = result
    expect(contextTracking()).toBe('async-local-storage')
    expect(lines).toEqual([expect.objectContaining({ level: 'info', event: 'request context follows awaits', fix: expect.stringMatching(/\{ request: call \}/) })])
    expect(lines[0]!.at).toMatch(/CallsAfterAwaiting\.fetch .*context\.test\.ts/)
    const hangUp = new AbortController()
    const second = replica.fetch(get(2), { signal: hangUp.signal })
    await tick()
    hangUp.abort()
    const { gated } = replica.instance() as CallsAfterAwaiting
    gated.open()
    expect(await (await first).text()).toBe('1')
    expect((await second).status).toBe(499)
    expect(gated.seen).toEqual([1])
    // The first call found its context although it came after an await and before the switch.
    expect(gated.keys).toEqual(['http'])
  })
})
