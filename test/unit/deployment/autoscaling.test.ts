/** The autoscaling decision and the router's moving count, without a server: time is passed in, not waited for. */
import { describe, expect, it } from 'vitest'
import { deployment } from '../../../src/index.js'
import { AutoscalingPolicy, sampleIntervalMs } from '../../../src/deployment/autoscaling-policy.js'
import { Router } from '../../../src/deployment/router.js'
import type { AutoscalingConfig } from '../../../src/deployment/options.js'

class Model {}
const optionsWith = (autoscaling: AutoscalingConfig, maxOngoingRequests = 100) => deployment(Model, { autoscaling, maxOngoingRequests }).options
const configOf = (autoscaling: AutoscalingConfig) => optionsWith(autoscaling).autoscaling!

/** Feed `ongoing` every 100 ms from `from` to `to` (ms), deciding after each sample as the runtimes do; the count after each. */
function run(policy: AutoscalingPolicy, current: number, from: number, to: number, ongoing: number): { at: number; count: number }[] {
  const trail: { at: number; count: number }[] = []
  for (let at = from; at <= to; at += 100) {
    policy.record(at, ongoing)
    current = policy.decide(at, current, 0)
    trail.push({ at, count: current })
  }
  return trail
}

describe('AutoscalingPolicy', () => {
  const config = configOf({ minReplicas: 1, maxReplicas: 5, targetOngoingRequests: 2, upscaleDelayS: 0.5, downscaleDelayS: 2, lookBackPeriodS: 1 })

  it("wants ceil(average ongoing / target) replicas, within min and max (Ray's decision)", () => {
    const policy = new AutoscalingPolicy(config)
    for (const [ongoing, wanted] of [
      [0, 1],
      [1, 1],
      [2, 1],
      [3, 2],
      [7, 4],
      [40, 5],
    ] as const) {
      const fresh = new AutoscalingPolicy(config)
      fresh.record(0, ongoing)
      expect(fresh.desired()).toBe(wanted)
    }
    // The average over the look-back window, not the last sample.
    policy.record(0, 8)
    policy.record(500, 0)
    expect(policy.average()).toBe(4)
    expect(policy.desired()).toBe(2)
    policy.record(1600, 0) // both earlier samples are now older than the window
    expect(policy.average()).toBe(0)
  })

  it('scales up only once more replicas have been wanted for upscaleDelayS', () => {
    const trail = run(new AutoscalingPolicy(config), 1, 0, 1000, 10)
    expect(trail.filter((t) => t.count === 1).map((t) => t.at)).toEqual([0, 100, 200, 300, 400])
    expect(trail.find((t) => t.count > 1)).toEqual({ at: 500, count: 5 })
  })

  it('scales down only after downscaleDelayS without a break; a burst in between starts the wait over', () => {
    const policy = new AutoscalingPolicy(config)
    run(policy, 5, 0, 1000, 10) // at five, wanted
    let trail = run(policy, 5, 1100, 2500, 0)
    expect(trail.at(-1)!.count).toBe(5) // wanted fewer since the window emptied, not yet for 2 s
    run(policy, 5, 2600, 2600, 100) // a burst: the average climbs, fewer no longer wanted
    trail = run(policy, 5, 2700, 6000, 0)
    const firstDown = trail.find((t) => t.count < 5)!
    expect(firstDown.count).toBe(1)
    expect(firstDown.at).toBeGreaterThanOrEqual(2700 + 2000)
  })

  it('a wish that turns from more replicas to fewer starts its wait over', () => {
    const policy = new AutoscalingPolicy(
      configOf({ minReplicas: 1, maxReplicas: 5, targetOngoingRequests: 1, upscaleDelayS: 1, downscaleDelayS: 1, lookBackPeriodS: 0.1 }),
    )
    policy.record(0, 4) // more than the 2 running are wanted from 0 ms
    expect(policy.decide(0, 2, 0)).toBe(2)
    policy.record(500, 1) // fewer are wanted from 500 ms, before the upscale delay ran out
    expect(policy.decide(500, 2, 0)).toBe(2)
    policy.record(1100, 1)
    expect(policy.decide(1100, 2, 0)).toBe(2) // 600 ms of wanting fewer: not yet
    policy.record(1500, 1)
    expect(policy.decide(1500, 2, 0)).toBe(1)
  })

  it('from zero, a waiting request starts a replica at once, without the upscale delay', () => {
    const policy = new AutoscalingPolicy(configOf({ minReplicas: 0, maxReplicas: 3, upscaleDelayS: 30 }))
    expect(policy.decide(0, 0, 0)).toBe(0)
    expect(policy.decide(0, 0, 1)).toBe(1)
    policy.record(0, 9)
    expect(policy.decide(0, 0, 9)).toBe(3)
  })

  it('samples ten times per look-back window, twice per delay, between 10 ms and 1 s', () => {
    expect(sampleIntervalMs(configOf({}))).toBe(1000)
    expect(sampleIntervalMs(configOf({ lookBackPeriodS: 1, upscaleDelayS: 0.2 }))).toBe(100)
    expect(sampleIntervalMs(configOf({ lookBackPeriodS: 0.01, upscaleDelayS: 0 }))).toBe(10)
  })
})

describe('Router with a moving count', () => {
  it('starts at initialReplicas and routes only over the replicas in service', () => {
    const router = new Router(optionsWith({ minReplicas: 1, maxReplicas: 4, initialReplicas: 2 }, 3))
    expect(router.replicas).toBe(2)
    const taken = Array.from({ length: 6 }, () => router.tryAcquire())
    expect(new Set(taken)).toEqual(new Set([0, 1]))
    expect(router.tryAcquire()).toBe(-1)
    expect(router.ongoing()).toBe(6)
  })

  it('scaling up hands the new room to waiters in order', async () => {
    const router = new Router(optionsWith({ minReplicas: 1, maxReplicas: 2 }, 1))
    expect(router.tryAcquire()).toBe(0)
    const waiting = router.acquire()
    expect(router.ongoing()).toBe(2)
    router.setReplicas(2)
    expect(await waiting).toBe(1)
    expect(router.queued).toBe(0)
  })

  it('a replica past the count takes nothing new and is reported drained when its last request is back', () => {
    const router = new Router(optionsWith({ minReplicas: 1, maxReplicas: 2, initialReplicas: 2 }, 1))
    const drained: number[] = []
    router.events = { drained: (replica) => drained.push(replica), demand: () => undefined }
    expect(router.tryAcquire()).toBeGreaterThanOrEqual(0)
    expect(router.tryAcquire()).toBeGreaterThanOrEqual(0)
    expect(router.load()).toEqual([1, 1])
    router.setReplicas(1)
    expect(drained).toEqual([]) // replica 1 still holds its request
    const waiting = router.acquire()
    router.release(1) // a draining replica's slot is not handed to the waiter
    expect(drained).toEqual([1])
    expect(router.queued).toBe(1)
    router.release(0)
    return expect(waiting).resolves.toBe(0)
  })

  it('at zero replicas a waiting request asks for one (demand), and is served when it comes', async () => {
    const router = new Router(optionsWith({ minReplicas: 0, maxReplicas: 2 }))
    expect(router.replicas).toBe(0)
    router.events = { drained: () => undefined, demand: () => router.setReplicas(1) }
    expect(router.tryAcquire()).toBe(-1)
    expect(await router.acquire()).toBe(0)
  })

  it('refuses a count outside 0 .. maxReplicas', () => {
    const router = new Router(optionsWith({ maxReplicas: 2 }))
    expect(() => router.setReplicas(3)).toThrow(/replica count must be from 0 to 2, received 3/)
  })
})
