import { describe, expect, it } from 'vitest'
import { ENDPOINTS as E, type Endpoint } from '../../../bench/endpoints.js'
import type { LoadRow } from '../../../bench/http.js'
import type { IsolateLimitRow } from '../../../bench/isolate-limit.js'
import { workerdRatios } from '../../../bench/workerd-ratios.js'
import { loadRow } from './load-row.js'

/** A row at c=64 whose rounds read `rounds` req/s, and whose req/s is their median. */
function row(endpoint: Endpoint, rounds: number[]): LoadRow & { endpoint: string } {
  const sorted = [...rounds].sort((a, b) => a - b)
  const requestsPerS = sorted[Math.floor(sorted.length / 2)]!
  return { ...loadRow({ path: endpoint.path, requestsPerS, repeats: rounds.length, roundsRequestsPerS: rounds }), endpoint: endpoint.name }
}

const limit = (model: 'ocr' | 'mlp', mode: 'run' | 'pipeline', batch: number, itemsPerS: number): IsolateLimitRow => ({
  model,
  mode,
  batch,
  itemsPerS,
  rounds: [itemsPerS],
})

const direct = [
  row(E.hello, [3000, 3000, 3000]),
  row(E.honoJson, [2500, 2000, 2400]),
  row(E.noop, [1800, 2100, 1500]),
  row(E.ocrBatched, [200, 200, 200]),
  row(E.ocrUnbatched, [160, 160, 160]),
  row(E.mlpBatched, [1500, 1500, 1500]),
  row(E.mlpUnbatched, [1400, 1400, 1400]),
]
const limits = [limit('ocr', 'pipeline', 8, 240), limit('ocr', 'pipeline', 32, 250), limit('mlp', 'run', 32, 1_000_000)]

describe('workerdRatios', () => {
  it('divides OCR by the lesser of its limit in one isolate and the bare route', () => {
    const { ratios } = workerdRatios(direct, [], limits)
    // OCR's limit (its best cell, 250 items/s) is under the bare route's 3000 req/s.
    expect(ratios.workerd_ocr_served_vs_ceiling_c64).toBeCloseTo(200 / 250)
    expect(ratios.workerd_ocr_batched_vs_unbatched_c64).toBeCloseTo(200 / 160)
  })

  it('takes the MLP over the JSON route round by round, and has no ceiling of the bare route for it', () => {
    // 0.6, 0.75, 0.625 round by round: 0.625.
    const { ratios, notes } = workerdRatios(direct, [], limits, { cores: 2 })
    expect(ratios.workerd_mlp_served_vs_json_route_c64).toBeCloseTo(0.625)
    expect(notes.workerd_mlp_served_vs_json_route_c64).toContain('shares the 2 cores with workerd')
    expect(ratios).not.toHaveProperty('workerd_mlp_served_vs_ceiling_c64')
    expect(
      workerdRatios(
        direct.filter((r) => r.endpoint !== E.honoJson.name),
        [],
        limits,
      ).ratios.workerd_mlp_served_vs_json_route_c64,
    ).toBeNull()
  })

  it('compares OCR as shipped with the same work run in the Worker, round by round', () => {
    // 0.8, 1.0, 2.0 round by round: 1.0.
    const rows = [...direct, row(E.ocrInWorker, [250, 200, 100])]
    expect(workerdRatios(rows, [], limits).ratios.workerd_ocr_batched_vs_in_worker_c64).toBeCloseTo(1)
    expect(workerdRatios(direct, [], limits).ratios.workerd_ocr_batched_vs_in_worker_c64).toBeNull()
  })

  it("counts the items each call into the MLP's objects carried, and leaves the ratio null without the metrics", () => {
    const counted = direct.map((r) => (r.endpoint === E.mlpBatched.name ? { ...r, objectCalls: { calls: 400, items: 4000 } } : r))
    expect(workerdRatios(counted, [], limits).ratios.workerd_items_per_object_call_c64).toBeCloseTo(10)
    const absent = direct.map((r) => (r.endpoint === E.mlpBatched.name ? { ...r, objectCalls: null } : r))
    expect(workerdRatios(absent, [], limits).ratios.workerd_items_per_object_call_c64).toBeNull()
    expect(workerdRatios(direct, [], limits).ratios.workerd_items_per_object_call_c64).toBeNull()
    // Through wrangler dev, the same ratio under its suffix.
    expect(workerdRatios([], counted, limits).ratios.workerd_items_per_object_call_c64_wrangler_dev).toBeCloseTo(10)
  })

  it('compares the MLP as shipped with its twin that makes one object call per request, round by round', () => {
    // 1.5, 1.0, 3.0 round by round: 1.5.
    const rows = [...direct, row(E.mlpSingleCalls, [1000, 1500, 500])]
    const { ratios, notes } = workerdRatios(rows, [], limits, { cores: 2 })
    expect(ratios.workerd_mlp_coalesced_vs_single_calls_c64).toBeCloseTo(1.5)
    expect(notes.workerd_mlp_coalesced_vs_single_calls_c64).toContain('against a call per request')
    expect(notes.workerd_mlp_coalesced_vs_single_calls_c64).toContain('shares the 2 cores with workerd')
    expect(workerdRatios(direct, [], limits).ratios.workerd_mlp_coalesced_vs_single_calls_c64).toBeNull()
    expect(workerdRatios([], rows, limits).ratios.workerd_mlp_coalesced_vs_single_calls_c64_wrangler_dev).toBeCloseTo(1.5)
  })

  it("takes what gathering adds to a lone request's p50 from the c=1 rows, round by round", () => {
    const atC1 = (endpoint: Endpoint, p50s: number[]) => ({ ...row(endpoint, [900, 900, 900]), connections: 1, roundsP50Ms: p50s })
    // Differences 0.1, 0.5, 0.2: 0.2. The c=64 rows' p50s play no part.
    const rows = [...direct, row(E.mlpSingleCalls, [1000, 1000, 1000]), atC1(E.mlpBatchedT0, [1.1, 1.6, 1.2]), atC1(E.mlpT0SingleCalls, [1.0, 1.1, 1.0])]
    const { ratios, notes } = workerdRatios(rows, [], limits)
    expect(ratios.workerd_mlp_added_p50_ms_c1).toBeCloseTo(0.2)
    expect(notes.workerd_mlp_added_p50_ms_c1).toContain("the median of 3 interleaved rounds' differences")
    // Without the c=1 rows, or with rows stored before each round's p50 was kept: not measured.
    expect(workerdRatios([...direct, row(E.mlpSingleCalls, [1000, 1000, 1000])], [], limits).ratios.workerd_mlp_added_p50_ms_c1).toBeNull()
    const { roundsP50Ms: _, ...stored } = atC1(E.mlpT0SingleCalls, [1.0, 1.1, 1.0])
    expect(workerdRatios([...direct, atC1(E.mlpBatchedT0, [1.1, 1.6, 1.2]), stored], [], limits).ratios.workerd_mlp_added_p50_ms_c1).toBeNull()
  })

  it("takes OCR's limit from its windows beside the served rows when there are some", () => {
    const { ratios, notes } = workerdRatios(direct, [], limits, { ocrBeside: { batch: 32, windows: [260, 180, 240] } })
    expect(ratios.workerd_ocr_served_vs_ceiling_c64).toBeCloseTo(200 / 240)
    expect(notes.workerd_ocr_served_vs_ceiling_c64).toContain('measured again after each round')
  })

  it('compares the model in one isolate with Node round by round, not median against median', () => {
    // Round by round 0.80, 0.50 and 0.82, so 0.80; median over median would read 240 / 320 = 0.75.
    const pair = { batch: 32, isolate: [240, 160, 270], node: [300, 320, 330] }
    const { ratios, notes } = workerdRatios(direct, [], limits, { ocrAgainstNode: pair })
    expect(ratios.workerd_ocr_isolate_vs_node_one_thread).toBeCloseTo(0.8)
    expect(notes.workerd_ocr_isolate_vs_node_one_thread).toContain('(240 against 320)')
  })

  it('leaves out what was not measured', () => {
    const { ratios } = workerdRatios(direct, [], limits)
    expect('workerd_ocr_isolate_vs_node_one_thread' in ratios).toBe(false)
    expect('workerd_deployment_route_vs_hono_c64_wrangler_dev' in ratios).toBe(false)
    expect(workerdRatios(direct, [], [], { ocrAgainstNode: { batch: 32, isolate: [], node: [] } }).ratios).not.toHaveProperty(
      'workerd_ocr_isolate_vs_node_one_thread',
    )
    expect(workerdRatios(direct, [], []).ratios.workerd_ocr_served_vs_ceiling_c64).toBeNull()
  })

  it('compares the MLP as shipped with its model run in the Worker, round by round', () => {
    // 0.6, 0.75, 0.5 round by round: 0.6. The bare route's rate plays no part.
    const rows = [...direct, row(E.mlpInWorker, [2500, 2000, 3000])]
    const { ratios, hop } = workerdRatios(rows, [], limits)
    expect(ratios.workerd_mlp_batched_vs_in_worker_c64).toBeCloseTo(0.6)
    expect(hop[0]!.mlpInWorkerUs).toBeCloseTo(1e6 / 2500)
    // Not measured: null, as the other rows' ratios.
    expect(workerdRatios(direct, [], limits).ratios.workerd_mlp_batched_vs_in_worker_c64).toBeNull()
  })

  it('takes the no-op route over the bare one round by round', () => {
    // 0.6, 0.7, 0.5 round by round: 0.6.
    expect(workerdRatios(direct, [], limits).ratios.workerd_deployment_route_vs_hono_c64).toBeCloseTo(0.6)
  })
})
