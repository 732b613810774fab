import { describe, expect, it } from 'vitest'
import { addObjectCalls, itemsPerCall, objectCallTotals, objectCallsBetween } from '../../../bench/object-calls.js'

/** /-/metrics as the Worker serves it, gathered from two replicas of the MLP and one of another deployment. */
const metrics = (mlp0: [number, number], mlp1: [number, number]) => `# HELP edgeserve_object_calls_total Calls into the replica's Durable Object.
# TYPE edgeserve_object_calls_total counter
edgeserve_object_calls_total{deployment="HousePricePredictor",replica="0"} ${mlp0[0]}
edgeserve_object_calls_total{deployment="HousePricePredictor",replica="1"} ${mlp1[0]}
edgeserve_object_calls_total{deployment="NoOp",replica="0"} 900
# HELP edgeserve_object_call_items Requests and handle calls each call carried.
# TYPE edgeserve_object_call_items histogram
edgeserve_object_call_items_bucket{deployment="HousePricePredictor",replica="0",le="1"} 2
edgeserve_object_call_items_bucket{deployment="HousePricePredictor",replica="0",le="+Inf"} ${mlp0[0]}
edgeserve_object_call_items_sum{deployment="HousePricePredictor",replica="0"} ${mlp0[1]}
edgeserve_object_call_items_count{deployment="HousePricePredictor",replica="0"} ${mlp0[0]}
edgeserve_object_call_items_bucket{deployment="HousePricePredictor",replica="1",le="+Inf"} ${mlp1[0]}
edgeserve_object_call_items_sum{deployment="HousePricePredictor",replica="1"} ${mlp1[1]}
edgeserve_object_call_items_count{deployment="HousePricePredictor",replica="1"} ${mlp1[0]}
edgeserve_object_call_items_sum{deployment="NoOp",replica="0"} 900
edgeserve_object_call_items_count{deployment="NoOp",replica="0"} 900
edgeserve_object_call_items_sum{deployment="House\\"Price\\\\Predictor",replica="0"} 5
edgeserve_object_call_items_count{deployment="House\\"Price\\\\Predictor",replica="0"} 1
# HELP edgeserve_batch_size Items per batch.
# TYPE edgeserve_batch_size histogram
edgeserve_batch_size_sum{deployment="HousePricePredictor",replica="0",method="fetch"} 64000
edgeserve_batch_size_count{deployment="HousePricePredictor",replica="0",method="fetch"} 2000
`

describe("items per call into a deployment's Durable Objects, from /-/metrics", () => {
  it("sums the histogram's count and sum over the deployment's replicas, and nothing of another deployment's", () => {
    expect(objectCallTotals(metrics([10, 30], [5, 25]), 'HousePricePredictor')).toEqual({ calls: 15, items: 55 })
    expect(objectCallTotals(metrics([10, 30], [5, 25]), 'NoOp')).toEqual({ calls: 900, items: 900 })
    // A label value with escaped characters is read unescaped.
    expect(objectCallTotals(metrics([10, 30], [5, 25]), 'House"Price\\Predictor')).toEqual({ calls: 1, items: 5 })
  })

  it('takes the delta of the sum over the delta of the count', () => {
    const before = objectCallTotals(metrics([10, 30], [5, 25]), 'HousePricePredictor')
    const after = objectCallTotals(metrics([110, 1030], [105, 1025]), 'HousePricePredictor')
    expect(objectCallsBetween(before, after)).toEqual({ calls: 200, items: 2000 })
    expect(itemsPerCall(objectCallsBetween(before, after))).toBe(10)
    // Rounds add up before the division: (2000 + 100) / (200 + 100), not the mean of 10 and 1.
    expect(
      itemsPerCall(
        addObjectCalls([
          { calls: 200, items: 2000 },
          { calls: 100, items: 100 },
        ]),
      ),
    ).toBe(7)
  })

  it('reads zero for a deployment with no call yet, where the family is declared', () => {
    expect(objectCallTotals(metrics([10, 30], [5, 25]), 'JsonWeb')).toEqual({ calls: 0, items: 0 })
  })

  it('leaves the ratio out where the metrics are absent, or no call was made', () => {
    const without =
      '# HELP edgeserve_batch_size Items per batch.\n# TYPE edgeserve_batch_size histogram\nedgeserve_batch_size_count{deployment="HousePricePredictor"} 3\n'
    expect(objectCallTotals(without, 'HousePricePredictor')).toBeNull()
    expect(objectCallsBetween(null, { calls: 5, items: 50 })).toBeNull()
    expect(addObjectCalls([{ calls: 5, items: 50 }, null])).toBeNull()
    expect(itemsPerCall(null)).toBeNull()
    expect(itemsPerCall(undefined)).toBeNull()
    expect(itemsPerCall({ calls: 0, items: 0 })).toBeNull()
  })
})
