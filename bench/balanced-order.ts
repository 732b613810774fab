/**
 * Orders for running n things in interleaved rounds so that each runs
 * right after each other one equally often: a Williams design, the balanced
 * Latin square of crossover trials. Row r runs the things in the order
 * 0, 1, n-1, 2, n-2, ... shifted by r, and over n rows every ordered pair
 * (a right before b) occurs exactly once.
 *
 * The engine bench needs it because what one engine leaves behind (its
 * garbage, a collection under way, a grown young generation) changes the
 * next one's time by more than the difference it measures. Rotating one
 * order each round does not spread that: in the rotations of 0, 1, 2, 3 a
 * thing that does not open its round always follows the same one (1 after
 * 0, 2 after 1, 3 after 2, 0 after 3), so one engine followed
 * @yornaath/batshit in three rounds of four.
 *
 * Only for even n: an odd n needs 2n rows, which the bench does not use.
 */
export function balancedOrders(n: number): number[][] {
  if (!Number.isInteger(n) || n < 2 || n % 2 !== 0) throw new RangeError(`balancedOrders needs an even count of at least 2, got ${n}`)
  const first = [0]
  for (let k = 1, low = 1, high = n - 1; k < n; k++) first.push(k % 2 === 1 ? low++ : high--)
  return Array.from({ length: n }, (_, row) => first.map((thing) => (thing + row) % n))
}
