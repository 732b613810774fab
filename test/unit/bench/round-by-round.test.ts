import { describe, expect, it } from 'vitest'
import { medianRun, type LoadRow } from '../../../bench/http.js'
import { differenceRoundByRound, roundByRound } from '../../../bench/lib.js'
import { loadRow } from './load-row.js'

/** One run of a row: its req/s and p50. */
const run = (requestsPerS: number, p50Ms: number): LoadRow =>
  loadRow({ path: '/predict', connections: 1, requestsPerS, p50Ms, p99Ms: 2 * p50Ms, roundsP50Ms: [p50Ms] })

describe('rows measured round-robin, compared round by round', () => {
  it("takes the median of each round's difference, not the difference of the medians", () => {
    // Differences 0.2, 0.9 and 0.1: 0.2.
    expect(differenceRoundByRound([1.2, 1.9, 1.1], [1.0, 1.0, 1.0])).toBeCloseTo(0.2)
    // A slow round slows both rows: differences 0.5, 0.1, 0.1 give 0.1; the medians (1.5 and 1.0) would read 0.5.
    expect(differenceRoundByRound([1.5, 3.1, 0.7], [1.0, 3.0, 0.6])).toBeCloseTo(0.1)
    // A row that adds nothing, or takes away: zero, or below it.
    expect(differenceRoundByRound([1, 1], [1, 1])).toBe(0)
    expect(differenceRoundByRound([0.8, 0.9], [1, 1])).toBeCloseTo(-0.15)
    // The ratio beside it, for the same rounds.
    expect(roundByRound([2, 3, 4], [1, 2, 2])).toBeCloseTo(2)
  })

  it('has no figure without rounds, or where the rows have not as many', () => {
    expect(differenceRoundByRound([], [])).toBeNull()
    expect(differenceRoundByRound([1.2, 1.3], [1.0])).toBeNull()
  })

  it("keeps every round's p50 in the row, in the order of the rounds, beside its req/s", () => {
    const row = medianRun([run(900, 1.3), run(1000, 1.1), run(800, 1.5)])
    // The row's own p50 is that of its median run by req/s (900), not the median p50.
    expect(row.p50Ms).toBe(1.3)
    expect(row.repeats).toBe(3)
    expect(row.roundsRequestsPerS).toEqual([900, 1000, 800])
    expect(row.roundsP50Ms).toEqual([1.3, 1.1, 1.5])
  })
})
