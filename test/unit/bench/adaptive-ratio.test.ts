import { describe, expect, it } from 'vitest'
import { adaptiveVsBestFixed, bestByOtherRounds, type SettingRow } from '../../../bench/adaptive-ratio.js'

const row = (setting: string, roundsRequestsPerS: number[], runtime = 'node', model = 'house-price'): SettingRow => ({
  runtime,
  model,
  setting,
  requestsPerS: [...roundsRequestsPerS].sort((a, b) => a - b)[roundsRequestsPerS.length >> 1]!,
  roundsRequestsPerS,
})

describe('adaptive over the best fixed size, judged on rounds that did not pick it', () => {
  it('reads 1.0 for an adaptive row that serves as the best size does, where one lucky fixed row would have pulled it down', () => {
    // Fixed 16 serves 100 every round, and adaptive the same. Fixed 32 read 95, then 105 twice: by the
    // median of all three rounds it is the best (105), and adaptive over it in those same rounds
    // reads 100/95, 100/105, 100/105: 0.95, for rows that serve the same.
    const rows = [row('16', [100, 100, 100]), row('32', [95, 105, 105]), row('adaptive', [100, 100, 100])]
    // Round 0 is judged against 32 (105 in the other rounds): 1.05. Rounds 1 and 2 against 16 (32's
    // other rounds read 95 and 105, a median of 100, which does not beat 16's 100): 1.0 each.
    expect(adaptiveVsBestFixed(rows)).toEqual({ adaptive_vs_best_fixed_house_price: 1 })
  })

  it('still reads below 1 for an adaptive row that serves less than the best size', () => {
    const rows = [row('8', [80, 85, 75, 80, 90]), row('16', [100, 110, 95, 105, 100]), row('adaptive', [90, 99, 85.5, 94.5, 90])]
    // 16 is the best by every round's others; adaptive serves 0.9 of it in every round.
    expect(adaptiveVsBestFixed(rows).adaptive_vs_best_fixed_house_price).toBeCloseTo(0.9)
  })

  it('picks, for each round, the fixed size with the highest median over the other rounds', () => {
    const fixed = [row('8', [100, 120, 120]), row('16', [118, 118, 100])]
    // Without round 0: 8 reads 120 and 16 reads 109. Without round 2: 8 reads 110 and 16 reads 118.
    expect(bestByOtherRounds(fixed, 0).setting).toBe('8')
    expect(bestByOtherRounds(fixed, 2).setting).toBe('16')
  })

  it('lets a single round choose for itself: there is no other', () => {
    const rows = [row('8', [100]), row('16', [120]), row('adaptive', [114])]
    expect(adaptiveVsBestFixed(rows).adaptive_vs_best_fixed_house_price).toBeCloseTo(0.95)
  })

  it('gives each model and runtime its own ratio, named by both (Node without a suffix)', () => {
    const rows = [
      row('8', [100, 100, 100], 'node', 'ocr-direction'),
      row('adaptive', [90, 90, 90], 'node', 'ocr-direction'),
      row('8', [50, 50, 50], 'workerd', 'ocr-direction'),
      row('adaptive', [50, 55, 60], 'workerd', 'ocr-direction'),
    ]
    const ratios = adaptiveVsBestFixed(rows)
    expect(ratios.adaptive_vs_best_fixed_ocr_direction).toBeCloseTo(0.9)
    expect(ratios.adaptive_vs_best_fixed_ocr_direction_workerd).toBeCloseTo(1.1)
  })
})
