/**
 * The router and route() when a replica says it is overloaded. The replicas
 * are objects standing in for Durable Objects (the real ones, in workerd,
 * are in test/workers/overload.test.ts); time is Vitest's fake clock.
 *
 * route() is the one way both an ingress request and a handle call reach a
 * replica, so each case runs for both: they are retried after an overload
 * the same way, except that a request whose body went with the first
 * attempt cannot be sent again.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { deployment, ReplicaOverloadedError, RequestCancelledError } from '../../../src/index.js'
import { Router, OVERLOAD_AVOID_MS, route } from '../../../src/deployment/router.js'
import { ReplicaSet } from '../../../src/deployment/replica-set.js'
import { RequestScope } from '../../../src/deployment/request-scope.js'
import type { ReplicaEndpoint } from '../../../src/deployment/endpoint.js'

class Model {}
const routerOf = (numReplicas: number, maxOngoingRequests = 100) => new Router(deployment(Model, { numReplicas, maxOngoingRequests }).options)

/**
 * Replicas that note each request or call sent to them, in `sent`, then let
 * `answer(replica)` throw (an overload) or answer `from <replica>`.
 */
function replicasOf(numReplicas: number, answer: (replica: number) => void, maxOngoingRequests = 100) {
  const sent: number[] = []
  const unused = () => Promise.reject(new Error('not used here'))
  const endpoints = Array.from({ length: numReplicas }, (_, replica): ReplicaEndpoint => ({
    async fetch() {
      sent.push(replica)
      answer(replica)
      return new Response(`from ${replica}`)
    },
    async invoke() {
      sent.push(replica)
      answer(replica)
      return { ok: true, value: `from ${replica}` }
    },
    metrics: unused,
    health: unused,
    describe: unused,
  }))
  return { set: new ReplicaSet(deployment(Model, { numReplicas, maxOngoingRequests }), endpoints), sent }
}

/** The two ways into route(), each answered as text: the ingress's Request (GET: no body) and a handle's call. */
const callers = {
  'an ingress request': async (set: ReplicaSet, scope = new RequestScope({ origin: 'http' })) =>
    (await route(set, scope, new Request('http://replica/'))).text(),
  'a handle call': async (set: ReplicaSet, scope = new RequestScope({ origin: 'handle' })) => {
    const outcome = await route(set, scope, { method: 'predict', args: [1] })
    return outcome.ok && 'value' in outcome ? String(outcome.value) : 'failed'
  },
}

const refusal = () => new ReplicaOverloadedError('replica 0 is overloaded', true)

afterEach(() => {
  vi.useRealTimers()
})

describe('Router: a replica that said it is overloaded', () => {
  it('gets nothing new for OVERLOAD_AVOID_MS while another replica has room, then its share again', () => {
    vi.useFakeTimers()
    const router = routerOf(2)
    router.avoid(0)
    const picks = Array.from({ length: 50 }, () => router.tryAcquire())
    expect(new Set(picks)).toEqual(new Set([1]))
    vi.advanceTimersByTime(OVERLOAD_AVOID_MS + 1)
    for (let i = 0; i < 50; i++) router.release(1)
    expect(new Set(Array.from({ length: 50 }, () => router.tryAcquire()))).toEqual(new Set([0, 1]))
  })

  it('is still used when every other replica is full: avoiding it is a preference, not a ban', () => {
    const router = routerOf(2, 1)
    router.avoid(0)
    expect(router.tryAcquire()).toBe(1)
    expect(router.tryAcquire()).toBe(0)
    expect(router.tryAcquire()).toBe(-1)
  })

  it('is avoided for a multiplexed model too, whose requests go to the next replica in its ranking', () => {
    const router = routerOf(3)
    const home = router.tryAcquire('model-a')
    router.release(home)
    router.avoid(home)
    const elsewhere = router.tryAcquire('model-a')
    expect(elsewhere).not.toBe(home)
    expect(elsewhere).toBeGreaterThanOrEqual(0)
  })
})

describe.each(Object.entries(callers))('route(): %s sent to a replica that says it is overloaded', (_, send) => {
  it('goes once to another replica when the replica refused it before running it', async () => {
    let idle = -1
    const { set, sent } = replicasOf(2, (replica) => {
      if (replica === idle) throw refusal()
    })
    // One request held elsewhere: the first pick is the idle replica, which refuses.
    const held = set.router.tryAcquire()
    idle = 1 - held
    expect(await send(set)).toBe(`from ${held}`)
    expect(sent).toEqual([idle, held])
    set.router.release(held)
    expect(set.router.load()).toEqual([0, 0])
    // The replica that refused is avoided now: the next requests go to the other, while it has room.
    expect(set.router.tryAcquire()).toBe(held)
  })

  it('is not sent elsewhere after an overload that reset the object mid-request: it may have run', async () => {
    const { set, sent } = replicasOf(2, () => {
      throw new ReplicaOverloadedError('memory limit', false)
    })
    await expect(send(set)).rejects.toBeInstanceOf(ReplicaOverloadedError)
    expect(sent).toHaveLength(1)
    expect(set.router.load()).toEqual([0, 0])
  })

  it('asks no replica twice: with one replica the overload is the answer', async () => {
    const { set, sent } = replicasOf(1, () => {
      throw refusal()
    })
    await expect(send(set)).rejects.toBeInstanceOf(ReplicaOverloadedError)
    expect(sent).toEqual([0])
    expect(set.router.load()).toEqual([0])
  })

  it('is answered by the second overload when the other replica refuses too, and both are avoided', async () => {
    const { set, sent } = replicasOf(3, () => {
      throw refusal()
    })
    await expect(send(set)).rejects.toBeInstanceOf(ReplicaOverloadedError)
    expect(sent).toHaveLength(2)
    expect(new Set(sent).size).toBe(2)
    expect(set.router.load()).toEqual([0, 0, 0])
    const untouched = [0, 1, 2].find((replica) => !sent.includes(replica))
    expect(set.router.tryAcquire()).toBe(untouched)
  })

  it('is sent nowhere when its caller has gone away, and its replica is given back', async () => {
    const { set, sent } = replicasOf(2, () => undefined)
    const gone = new AbortController()
    gone.abort(new RequestCancelledError('the client went away'))
    const scope = new RequestScope({ origin: 'http', callerSignal: gone.signal })
    await expect(send(set, scope)).rejects.toThrow('the client went away')
    expect(sent).toEqual([])
    expect(set.router.load()).toEqual([0, 0])
  })
})

describe('route(): a request with a body', () => {
  it('is not sent again after an overload, since its body went with the first attempt', async () => {
    const { set, sent } = replicasOf(2, () => {
      throw refusal()
    })
    const request = new Request('http://replica/', { method: 'POST', body: '{"x":1}' })
    await expect(route(set, new RequestScope({ origin: 'http' }), request)).rejects.toBeInstanceOf(ReplicaOverloadedError)
    expect(sent).toHaveLength(1)
    expect(set.router.load()).toEqual([0, 0])
  })
})
