/** The value seen most among `values` (a queue's limits over a window, or its batches' sizes), and the share of them it is. */
export function mostSeen(values: readonly number[]): { limit: number; share: number } {
  const counts = new Map<number, number>()
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1)
  const [limit, count] = [...counts].sort((a, b) => b[1] - a[1])[0]!
  return { limit, share: count / values.length }
}
