import { describe, expect, it } from 'vitest'
import { balancedOrders } from '../../../bench/balanced-order.js'

describe('balancedOrders (the engine bench runs its engines in these orders)', () => {
  it.each([2, 4, 6, 8])('over %i rows, every thing runs once a row and right after every other thing once', (n) => {
    const rows = balancedOrders(n)
    expect(rows).toHaveLength(n)
    for (const row of rows) expect([...row].sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i))
    const follows = new Map<string, number>()
    for (const row of rows) for (let i = 1; i < row.length; i++) follows.set(`${row[i - 1]}>${row[i]}`, (follows.get(`${row[i - 1]}>${row[i]}`) ?? 0) + 1)
    expect(follows.size).toBe(n * (n - 1))
    expect([...follows.values()].every((count) => count === 1)).toBe(true)
  })

  it('is not what rotating one order gives, where 1 follows 0 in three rows of four', () => {
    const rows = balancedOrders(4)
    expect(rows.filter((row) => row.indexOf(1) === row.indexOf(0) + 1)).toHaveLength(1)
  })

  it.each([0, 1, 3, 2.5])('refuses %s things', (n) => {
    expect(() => balancedOrders(n)).toThrow(/even count of at least 2/)
  })
})
