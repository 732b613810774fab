/**
 * How a request's context (signal, deadline, model id, origin) follows a
 * replica method's code into the batch queue: through AsyncLocalStorage, so
 * a batched call inherits it wherever in the method it is made, after any
 * number of awaits and inside nested async functions.
 */
import { describe, expect, it } from 'vitest'
import { batch, deployment, type CallContext } from '../../../src/index.js'
import { Replica } from '../../../src/deployment/replica.js'
import { logged } from '../../support/logged.js'

/**
 * A batched method whose first batch waits for open(): calls behind it stay
 * queued. Its batch key is the call's origin, and `contexts` records the
 * context the queue saw for every call (what batchKey is given).
 */
function gatedBatch() {
  const seen: number[] = []
  const contexts: CallContext[] = []
  let open = () => {}
  const gate = new Promise<void>((resolve) => (open = resolve))
  const fn = batch(
    async (xs: number[]) => {
      seen.push(...xs)
      await gate
      return xs
    },
    {
      batchKey: (_x, context) => {
        contexts.push(context)
        return String(context.origin)
      },
    },
  )
  return { fn, seen, contexts, open: () => open() }
}

const x = (request: Request) => Number(new URL(request.url).searchParams.get('x'))
const tick = () => new Promise((resolve) => setTimeout(resolve, 5))
/** Let the replica's code run until `done()`: the methods await timers of their own before their batched call. */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await tick()
}

class CallsBeforeAwaiting {
  readonly gated = gatedBatch()
  handle = this.gated.fn
  async fetch(request: Request) {
    return String(await this.handle(x(request)))
  }
}

/** The batched call comes after several awaits of different kinds: a promise, a timer, a microtask chain. */
class CallsAfterAwaiting {
  readonly gated = gatedBatch()
  handle = this.gated.fn
  async fetch(request: Request) {
    const value = await Promise.resolve(x(request))
    await new Promise((resolve) => setTimeout(resolve, 1))
    await Promise.resolve().then(() => undefined)
    return String(await this.handle(value))
  }
}

/** The batched call is made by a nested async function, itself after an await. */
class CallsInNestedFunction {
  readonly gated = gatedBatch()
  handle = this.gated.fn
  async fetch(request: Request) {
    await new Promise((resolve) => setTimeout(resolve, 1))
    return String(await this.#viaHelper(x(request)))
  }
  async #viaHelper(value: number) {
    await Promise.resolve()
    const inner = async () => {
      await new Promise((resolve) => setImmediate(resolve))
      return this.handle(value)
    }
    return inner()
  }
}

const get = (n: number) => new Request(`http://test.local/?x=${n}`)

/**
 * Two requests to `replica`, whose class holds a gatedBatch() as `gated`:
 * the first holds the batch slot, the second hangs up while it waits in
 * the queue; then the gate opens. What each was answered, and the batch.
 */
async function hangUpWhileQueued(replica: Replica) {
  const { gated } = replica.instance() as { gated: ReturnType<typeof gatedBatch> }
  const first = replica.fetch(get(1), {})
  await until(() => gated.seen.length === 1)
  const hangUp = new AbortController()
  const second = replica.fetch(get(2), { signal: hangUp.signal })
  await until(() => gated.contexts.length === 2)
  hangUp.abort()
  gated.open()
  return { first: await (await first).text(), second: (await second).status, gated }
}

describe('request context in the batch queue', () => {
  for (const cls of [CallsBeforeAwaiting, CallsAfterAwaiting, CallsInNestedFunction]) {
    it(`${cls.name}: a client that hangs up while its call is queued takes the call out of the queue`, async () => {
      const { result, lines } = await logged(() => hangUpWhileQueued(new Replica(deployment(cls, { name: cls.name }), 0)))
      const { first, second, gated } = result
      expect([first, second]).toEqual(['1', 499])
      expect(gated.seen).toEqual([1]) // the hung-up call left the queue unseen
      expect(gated.contexts.map((context) => context.origin)).toEqual(['http', 'http'])
      expect(lines).toEqual([]) // nothing to say: the context follows without a switch or a log line
    })

    it(`${cls.name}: the batched call sees the request's signal, deadline and model id`, async () => {
      const replica = new Replica(deployment(cls, { name: `${cls.name}Deadline`, requestTimeoutS: 30 }), 0)
      const client = new AbortController()
      const before = Date.now()
      const { gated } = replica.instance() as { gated: ReturnType<typeof gatedBatch> }
      const answer = replica.fetch(get(7), { signal: client.signal, multiplexedModelId: 'model-a' })
      await until(() => gated.contexts.length === 1)
      const [context] = gated.contexts
      expect(context).toMatchObject({ origin: 'http', multiplexedModelId: 'model-a' })
      // The request's signal: it aborts when the client's does (or at the deadline).
      const signal = context!.signal as AbortSignal
      expect(signal.aborted).toBe(false)
      client.abort()
      expect(signal.aborted).toBe(true)
      gated.open()
      expect((await answer).status).toBe(499)
      expect(context!.deadline).toBeGreaterThanOrEqual(before + 30_000)
      expect(context!.deadline).toBeLessThanOrEqual(Date.now() + 30_000)
    })
  }

  it('a deadline that passes after the method awaited fails the queued call with 504', async () => {
    class Slow extends CallsAfterAwaiting {}
    const replica = new Replica(deployment(Slow, { name: 'SlowDeadline', requestTimeoutS: 30 }), 0)
    const { gated } = replica.instance() as CallsAfterAwaiting
    const first = replica.fetch(get(1))
    await until(() => gated.seen.length === 1)
    const second = replica.fetch(get(2), { deadline: Date.now() + 50 })
    const status = (await second).status
    expect(gated.fn.stats().queueLength).toBe(0)
    gated.open()
    expect(status).toBe(504)
    expect(await (await first).text()).toBe('1')
    expect(gated.seen).toEqual([1])
  })
})
