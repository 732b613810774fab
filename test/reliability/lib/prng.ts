/** mulberry32: a small seeded PRNG, so that every generated input replays from its seed. */
export class Prng {
  private state: number

  constructor(readonly seed: number) {
    this.state = seed >>> 0
  }

  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0)
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1))
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!
  }

  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n)
    for (let i = 0; i < n; i++) out[i] = Math.floor(this.next() * 256)
    return out
  }

  /** Printable text without '(' or '/', so an echoed value cannot look like a stack frame or a path. */
  text(n: number): string {
    const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -_.~!*;:,@$+=?é€😀'
    let s = ''
    for (let i = 0; i < n; i++) s += this.pick([...alphabet])
    return s
  }
}
