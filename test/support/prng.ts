/**
 * mulberry32: a small seeded generator, so that every random input in the
 * tests replays from its seed. Returns floats in [0, 1).
 */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = Math.imul(state ^ (state >>> 15), state | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** `length` seeded bytes. */
export function seededBytes(length: number, seed: number): Uint8Array {
  const next = mulberry32(seed)
  return Uint8Array.from({ length }, () => Math.floor(next() * 256))
}
