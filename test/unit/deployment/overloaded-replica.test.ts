/**
 * The router and afterOverload() when a replica says it is overloaded. The
 * replicas are functions standing in for Durable Objects (the real ones, in
 * workerd, are in test/workers/overload.test.ts); time is Vitest's fake clock.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { deployment, ReplicaOverloadedError } from '../../../src/index.js'
import { Router, OVERLOAD_AVOID_MS } from '../../../src/deployment/router.js'
import { afterOverload } from '../../../src/deployment/overload.js'

class Model {}
const routerOf = (numReplicas: number, maxOngoingRequests = 100) => new Router(deployment(Model, { numReplicas, maxOngoingRequests }).options)

/** One request routed as the ingress and handles route it: a replica, the answer, afterOverload() on an overload. */
async function sendRouted<R>(router: Router, resendable: boolean, send: (replica: number) => Promise<R>): Promise<R> {
  let replica = router.tryAcquire()
  if (replica < 0) replica = await router.acquire(undefined)
  try {
    return await send(replica)
  } catch (error) {
    if (!(error instanceof ReplicaOverloadedError)) throw error
    return await afterOverload(router, replica, error, resendable, undefined, send)
  } finally {
    router.release(replica)
  }
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

describe('afterOverload(): a request routed to a replica that says it is overloaded', () => {
  it('sends a refused request that can be sent again once to another replica', async () => {
    const router = routerOf(2)
    expect(router.tryAcquire()).toBeGreaterThanOrEqual(0)
    const held = router.load()[0] === 1 ? 0 : 1
    // One request held elsewhere: the first pick is the idle replica, which refuses.
    const idle = 1 - held
    const sent: number[] = []
    const answer = await sendRouted(router, true, async (replica) => {
      sent.push(replica)
      if (replica === idle) throw refusal()
      return `from ${replica}`
    })
    expect(answer).toBe(`from ${held}`)
    expect(sent).toEqual([idle, held])
    router.release(held)
    expect(router.load()).toEqual([0, 0])
  })

  it('answers with the overload when the request cannot be sent again (its body went with it)', async () => {
    const router = routerOf(2, 1)
    const held = router.tryAcquire()
    const idle = 1 - held
    const sent: number[] = []
    const error = await sendRouted(router, false, async (replica) => {
      sent.push(replica)
      throw refusal()
    }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ReplicaOverloadedError)
    expect(sent).toEqual([idle])
    router.release(held)
    expect(router.load()).toEqual([0, 0])
    // The replica that refused is avoided now: the next requests go to the other, while it has room.
    expect(router.tryAcquire()).toBe(held)
  })

  it('does not send an overload that reset the object mid-request elsewhere: it may have run', async () => {
    const router = routerOf(2)
    const sent: number[] = []
    const error = await sendRouted(router, true, async (replica) => {
      sent.push(replica)
      throw new ReplicaOverloadedError('memory limit', false)
    }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ReplicaOverloadedError)
    expect(sent).toHaveLength(1)
  })

  it('asks no replica twice: with one replica the overload is the answer', async () => {
    const router = routerOf(1)
    let calls = 0
    const error = await sendRouted(router, true, async () => {
      calls++
      throw refusal()
    }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ReplicaOverloadedError)
    expect(calls).toBe(1)
    expect(router.load()).toEqual([0])
  })
})
