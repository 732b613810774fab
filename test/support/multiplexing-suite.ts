/**
 * Model multiplexing end to end, shared by the Node and workerd test files:
 * the model id from the header or a handle's options, the router's affinity
 * and its spill-over, batches that never mix models, the LRU eviction order
 * with release(), and bad ids answered with a 400.
 */
import { describe, expect, it } from 'vitest'
import type { TenantAnswer } from './tenant-app.js'

const HEADER = 'edgeserve-multiplexed-model-id'

export function describeMultiplexing(runtime: string, baseUrl: () => string): void {
  const ask = async (path: string, tenant: string | undefined, x = 0): Promise<TenantAnswer> => {
    const response = await fetch(`${baseUrl()}${path}${path.includes('?') ? '&' : '?'}x=${x}`, { headers: tenant === undefined ? {} : { [HEADER]: tenant } })
    expect(response.status, await response.clone().text()).toBe(200)
    return (await response.json()) as TenantAnswer
  }

  describe(`model multiplexing on ${runtime}`, () => {
    it("sends each model's requests to one replica, which loads it once", async () => {
      const tenantsOf = ['acme', 'globex', 'initech']
      const byTenant = new Map<string, Set<number>>()
      for (let round = 0; round < 4; round++) {
        for (const tenant of tenantsOf) {
          const answer = await ask('/tenants', tenant, round)
          expect(answer.model).toBe(tenant)
          byTenant.set(tenant, (byTenant.get(tenant) ?? new Set()).add(answer.replica))
        }
      }
      for (const [tenant, replicas] of byTenant) expect([...replicas], tenant).toHaveLength(1)
      const metrics = await (await fetch(`${baseUrl()}/-/metrics`)).text()
      const loads = [...metrics.matchAll(/^edgeserve_multiplexed_model_loads_total\{deployment="TenantModels",replica="\d"\} (\d+)$/gm)]
      expect(loads.reduce((sum, m) => sum + Number(m[1]), 0)).toBe(tenantsOf.length)
      expect(metrics).toMatch(/^edgeserve_multiplexed_models_loaded\{deployment="TenantModels",replica="\d"\} [12]$/m)
    })

    it('never mixes two models in one batch, while calls of one model share batches', async () => {
      const calls = Array.from({ length: 36 }, (_, i) => ({ tenant: ['acme', 'globex', 'initech'][i % 3]!, x: i }))
      const answers = await Promise.all(calls.map(({ tenant, x }) => ask('/tenants', tenant, x)))
      answers.forEach((answer, i) => {
        expect(answer.x).toBe(i)
        expect([answer.model, answer.batchModel]).toEqual([calls[i]!.tenant, calls[i]!.tenant])
      })
      expect(Math.max(...answers.map((a) => a.batchSize))).toBeGreaterThan(1)
    })

    it('spills a busy model over to the next replica once its own holds maxOngoingRequests', async () => {
      // maxOngoingRequests is 4: twelve held requests for one model need three replicas' room.
      const answers = await Promise.all(Array.from({ length: 12 }, (_, x) => ask('/tenants?holdMs=300', 'hooli', x)))
      expect(answers.every((a) => a.model === 'hooli')).toBe(true)
      expect(new Set(answers.map((a) => a.replica)).size).toBeGreaterThanOrEqual(2)
    })

    it('evicts the least recently used model past maxModelsPerReplica, and releases it', async () => {
      for (const tenant of ['a', 'b', 'a', 'c']) await ask('/tenants/one', tenant)
      // b was used longest ago when c came: b goes, a stays.
      expect((await ask('/tenants/one', 'a')).released).toEqual(['b'])
      expect((await ask('/tenants/one', 'b')).released).toEqual(['b', 'c'])
    })

    it('takes the model id of a handle call from handle.options(), and refuses a bad one there', async () => {
      const response = await fetch(`${baseUrl()}/tenants/handle?tenant=globex&x=7`)
      expect(await response.json()).toMatchObject({ x: 7, model: 'globex', batchModel: 'globex' })
      expect(await (await fetch(`${baseUrl()}/tenants/handle-bad`)).json()).toEqual({
        error: 'TypeError: handle.options(): multiplexedModelId contains a control character',
      })
    })

    it('answers a missing, empty, too long or control-character id with a 400 JSON error', async () => {
      const cases: [Record<string, string>, RegExp][] = [
        [{}, /names no model: send the edgeserve-multiplexed-model-id header/],
        [{ [HEADER]: '' }, /header is empty/],
        [{ [HEADER]: 'x'.repeat(257) }, /257 characters long; at most 256/],
        [{ [HEADER]: 'tab\there' }, /control character/],
      ]
      for (const [headers, message] of cases) {
        const response = await fetch(`${baseUrl()}/tenants`, { headers })
        expect(response.status, JSON.stringify(headers)).toBe(400)
        expect(await response.json()).toMatchObject({ error: { type: 'HTTPError', message: expect.stringMatching(message) } })
      }
    })
  })
}
