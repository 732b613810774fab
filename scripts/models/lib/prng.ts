/**
 * Seeded pseudo-random numbers, so every generated dataset, weight
 * initialization and shuffle is bit-for-bit reproducible across runs and
 * machines (Math.random cannot be seeded).
 *
 * mulberry32 is a tiny 32-bit generator with good enough statistics for
 * synthetic data and SGD shuffling; we do not need cryptographic quality.
 */
export class Prng {
  private state: number

  constructor(seed: number) {
    // Force to uint32 so the same seed gives the same stream everywhere.
    this.state = seed >>> 0
  }

  /** Uniform float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0
    let t = this.state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }

  /** Uniform float in [lo, hi). */
  uniform(lo: number, hi: number): number {
    return lo + (hi - lo) * this.next()
  }

  /** Uniform integer in [lo, hi] (inclusive). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1))
  }

  /**
   * Standard normal via Box-Muller. We deliberately do not cache the second
   * value: one call = exactly two uniforms keeps the stream easy to reason about.
   */
  normal(mean = 0, std = 1): number {
    const u1 = 1 - this.next() // (0, 1], avoids log(0)
    const u2 = this.next()
    return mean + std * Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2)
  }

  /** In-place Fisher-Yates shuffle. */
  shuffle(items: Uint32Array): void {
    for (let i = items.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1))
      const tmp = items[i]!
      items[i] = items[j]!
      items[j] = tmp
    }
  }
}
