import { describe, expect, it } from 'vitest'
import { inWindow } from '../../../bench/http.js'

describe('a load row counts the answers of its window only', () => {
  it('leaves out what arrives during the lead-in and after the window, and counts the rest', () => {
    const arrivals = [120, 380, 499.9, 500, 501, 1400, 2499.9, 2500, 2600]
    expect(arrivals.filter((at) => inWindow(at, 500, 2500))).toEqual([500, 501, 1400, 2499.9])
  })
})
