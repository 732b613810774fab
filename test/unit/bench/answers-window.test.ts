import { describe, expect, it } from 'vitest'
import { answersBetween } from '../../../bench/http.js'

describe('a load row counts the answers of its window only', () => {
  it('leaves out what arrives during the lead-in and after the window, and counts the rest once each', () => {
    const window = answersBetween(500, 2500)
    const arrivals = [120, 380, 499.9, 500, 501, 1400, 2499.9, 2500, 2600]
    const counted = arrivals.filter((at) => window.counts(at))
    expect(counted).toEqual([500, 501, 1400, 2499.9])
    expect(window.answers).toBe(4)
  })
})
