/**
 * Model multiplexing's parts on their own: the per-replica model cache (LRU,
 * shared loads, failed loads, models in use kept), the model id's checks,
 * batches keyed by model id, and the router's affinity.
 */
import { describe, expect, it } from 'vitest'
import { batch, HTTPError, multiplexed, multiplexedModelId } from '../../../src/index.js'
import { modelCachesOf } from '../../../src/deployment/multiplexed.js'
import { checkModelId } from '../../../src/deployment/model-id.js'
import { Router } from '../../../src/deployment/router.js'
import { getValidDeploymentOptions } from '../../../src/deployment/options.js'
import { currentContext, runWithContext, type RequestContext } from '../../../src/batching/context.js'

/** Run `fn` as the replica runs a method: inside the request's context. */
const runInContext = async <R>(context: RequestContext, fn: () => R): Promise<Awaited<R>> => await runWithContext(context, fn, undefined)
import { holdThread, passOwedLoopTurns } from '../../support/deferred.js'

/** A model that records its release, as an onnxruntime session's release() would. */
class FakeModel {
  released = false
  constructor(readonly id: string) {}
  release(): void {
    this.released = true
  }
}

function cacheOf(getModel: object) {
  return modelCachesOf({ getModel })[0]!
}

describe('multiplexed()', () => {
  it('loads a model once, keeps at most maxModelsPerReplica, evicts the least recently used and releases it', async () => {
    const loads: string[] = []
    const getModel = multiplexed(
      (id: string) => {
        loads.push(id)
        return new FakeModel(id)
      },
      { maxModelsPerReplica: 2 },
    )
    const a = await getModel('a')
    await getModel('b')
    expect(await getModel('a')).toBe(a) // a is now the most recent
    await getModel('c') // b goes
    await new Promise((resolve) => setImmediate(resolve))
    expect(cacheOf(getModel).ids()).toEqual(['a', 'c'])
    expect(loads).toEqual(['a', 'b', 'c'])
    await getModel('b')
    await new Promise((resolve) => setImmediate(resolve))
    expect(cacheOf(getModel).ids()).toEqual(['c', 'b'])
    expect(a.released).toBe(true)
    expect(loads).toEqual(['a', 'b', 'c', 'b'])
  })

  it('shares one load between concurrent calls, and does not keep a failed load', async () => {
    let calls = 0
    const getModel = multiplexed(async (id: string) => {
      calls++
      await new Promise((resolve) => setTimeout(resolve, 5))
      if (calls === 1) throw new Error(`no weights for ${id}`)
      return new FakeModel(id)
    })
    const results = await Promise.allSettled([getModel('x'), getModel('x')])
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected'])
    expect(calls).toBe(1)
    expect((await getModel('x')).id).toBe('x')
    expect(calls).toBe(2)
  })

  it.each([1, 2])('does not evict a model %i running request(s) use; it goes once the last of them ends', async (users) => {
    const getModel = multiplexed((id: string) => new FakeModel(id), { maxModelsPerReplica: 1 })
    const cache = cacheOf(getModel)
    for (let i = 0; i < users; i++) cache.pin('a')
    const a = await getModel('a')
    await getModel('b')
    // Every request but the last ends: the model stays.
    for (let i = 1; i < users; i++) cache.unpin('a')
    await new Promise((resolve) => setImmediate(resolve))
    expect(cache.ids()).toEqual(['a', 'b'])
    expect(a.released).toBe(false)
    cache.unpin('a')
    await new Promise((resolve) => setImmediate(resolve))
    expect(cache.ids()).toEqual(['b'])
    expect(a.released).toBe(true)
  })

  it('counts a model as loaded once its load has finished, not while it runs', async () => {
    let finish: () => void = () => undefined
    const getModel = multiplexed((id: string) => new Promise<FakeModel>((resolve) => (finish = () => resolve(new FakeModel(id)))))
    const cache = cacheOf(getModel)
    const loading = getModel('a')
    await new Promise((resolve) => setImmediate(resolve))
    expect([cache.loaded, cache.ids()]).toEqual([0, []])
    finish()
    await loading
    expect([cache.loaded, cache.ids()]).toEqual([1, ['a']])
  })

  it('says what to pass when given bad options', () => {
    expect(() => multiplexed('load' as never)).toThrow(/takes the function that loads a model by id/)
    expect(() => multiplexed((id: string) => id, { maxModelsPerReplica: 0 })).toThrow(/maxModelsPerReplica must be a whole number of at least 1, received 0/)
    expect(() => multiplexed((id: string) => id, { maxModelsPerReplica: Infinity })).toThrow(/at least 1, received Infinity/)
    expect(() => multiplexed((id: string) => id, { maxModelsPerReplica: 1.5 })).toThrow(/received 1.5/)
    // Ray's name for it, in either spelling, and any other unknown key, are refused rather than ignored.
    expect(() => multiplexed((id: string) => id, { maxNumModelsPerReplica: 2 } as never)).toThrow(
      'multiplexed() has no option "maxNumModelsPerReplica"; edgeserve spells Ray\'s max_num_models_per_replica as maxModelsPerReplica',
    )
    expect(() => multiplexed((id: string) => id, { max_num_models_per_replica: 2 } as never)).toThrow(
      /spells Ray's max_num_models_per_replica as maxModelsPerReplica/,
    )
    expect(() => multiplexed((id: string) => id, { cache: 2 } as never)).toThrow('multiplexed() has no option "cache"; its one option is maxModelsPerReplica')
  })
})

describe('model ids', () => {
  it('are non-empty strings of at most 256 characters without control characters; anything else is a 400', () => {
    expect(checkModelId('eu-west/v2', 'the header')).toBe('eu-west/v2')
    for (const [value, message] of [
      ['', /the header is empty/],
      ['x'.repeat(257), /257 characters long; at most 256/],
      ['a\tb', /control character/],
      ['a\u007fb', /control character/],
    ] as const) {
      const error = (() => {
        try {
          checkModelId(value, 'the header')
        } catch (caught) {
          return caught
        }
      })()
      expect(error).toBeInstanceOf(HTTPError)
      expect((error as HTTPError).status).toBe(400)
      expect((error as HTTPError).message).toMatch(message)
    }
  })

  it('multiplexedModelId() is a 400 for a request that names none, an Error outside any request', async () => {
    expect(() => multiplexedModelId()).toThrow(/call it inside a deployment method/)
    const named = await runInContext({ origin: 'handle', multiplexedModelId: 'eu' }, () => multiplexedModelId())
    expect(named).toBe('eu')
    await expect(runInContext({ origin: 'handle' }, () => multiplexedModelId())).rejects.toMatchObject({ status: 400 })
  })
})

describe('batches of a multiplexed deployment', () => {
  it('never mix two model ids, and the handler knows its batch model', async () => {
    const batches: { ids: string[]; items: number[] }[] = []
    const f = batch(
      async (items: number[], info) => {
        batches.push({ ids: [info.multiplexedModelId!, multiplexedModelId()], items })
        return items
      },
      { maxBatchSize: 8, batchWaitTimeoutS: 0.01 },
    )
    const calls = Array.from({ length: 12 }, (_, i) => runInContext({ origin: 'handle', multiplexedModelId: i % 3 === 0 ? 'a' : 'b' }, () => f(i)))
    expect(await Promise.all(calls)).toEqual(Array.from({ length: 12 }, (_, i) => i))
    for (const { ids, items } of batches) {
      const expected = items[0]! % 3 === 0 ? 'a' : 'b'
      expect(ids).toEqual([expected, expected])
      expect(items.every((i) => (i % 3 === 0 ? 'a' : 'b') === expected)).toBe(true)
    }
    expect(batches.length).toBeGreaterThanOrEqual(2)
  })

  it("run a batch whose calls name no model in no request's context, whichever request's code started it", async () => {
    // A batch that held the thread makes the next batches wait for loop turns; the
    // pump that then starts one runs in the context the wait began in, a request of
    // model 'a'. The batch of a call that names no model must still see no model.
    const seen: (string | undefined)[] = []
    const f = batch(
      async (items: number[], info) => {
        seen.push(currentContext()?.multiplexedModelId)
        if (info.multiplexedModelId === 'a') holdThread(5)
        return items
      },
      { maxBatchSize: 8 },
    )
    await passOwedLoopTurns()
    const first = runInContext({ origin: 'http', multiplexedModelId: 'a' }, () => f(1))
    await new Promise((resolve) => setImmediate(resolve)) // the batch of 'a' has run and held the thread
    const second = runInContext({ origin: 'http' }, () => f(2))
    expect(await Promise.all([first, second])).toEqual([1, 2])
    expect(seen).toEqual(['a', undefined])
    await expect(runInContext({ origin: 'http' }, () => batch(async (xs: number[]) => xs.map(() => multiplexedModelId()))(3))).rejects.toThrow(/names no model/)
  })

  it('keep a batchKey apart from a model id that looks like it', async () => {
    const keys: (string | undefined)[][] = []
    const f = batch(
      async (items: string[], info) => {
        keys.push([info.key, info.multiplexedModelId])
        return items
      },
      { maxBatchSize: 8, batchWaitTimeoutS: 0.01, batchKey: (item) => item },
    )
    await Promise.all([
      runInContext({ origin: 'handle', multiplexedModelId: 'a' }, () => f('b')),
      runInContext({ origin: 'handle' }, () => f('\u0000a\u0000b')),
    ])
    expect(keys.sort()).toEqual([
      ['\u0000a\u0000b', undefined],
      ['b', 'a'],
    ])
  })
})

describe('the router with model ids', () => {
  const router = (numReplicas: number, maxOngoingRequests = 100) => new Router(getValidDeploymentOptions({ numReplicas, maxOngoingRequests }, 'Regional'))

  it("sends a model's requests to one replica, the same in every router, spread over replicas by model", () => {
    const first = router(4)
    const second = router(4)
    const chosen = new Map<string, number>()
    for (const id of Array.from({ length: 40 }, (_, i) => `model-${i}`)) {
      const replica = first.tryAcquire(id)
      first.release(replica)
      for (let i = 0; i < 5; i++) {
        const again = second.tryAcquire(id)
        second.release(again)
        expect(again, id).toBe(replica)
      }
      chosen.set(id, replica)
    }
    // 40 models over 4 replicas: each replica is some model's.
    expect(new Set(chosen.values()).size).toBe(4)
  })

  it('spills to the next replica in the model ranking when its replica is at maxOngoingRequests', () => {
    const r = router(3, 2)
    const home = r.tryAcquire('eu')
    expect(r.tryAcquire('eu')).toBe(home)
    const spill = r.tryAcquire('eu')
    expect(spill).not.toBe(home)
    expect(spill).toBeGreaterThanOrEqual(0)
    r.release(home)
    expect(r.tryAcquire('eu')).toBe(home)
  })

  it('moves only the models of a replica that went when the count falls', () => {
    const r = router(4)
    const before = new Map<string, number>()
    for (let i = 0; i < 60; i++) {
      const replica = r.tryAcquire(`m${i}`)
      r.release(replica)
      before.set(`m${i}`, replica)
    }
    r.setReplicas(3)
    for (const [id, replica] of before) {
      const now = r.tryAcquire(id)
      r.release(now)
      if (replica < 3) expect(now, id).toBe(replica)
    }
  })
})
