import { mulberry32 } from '../../support/prng.js'

/** A seeded PRNG with the helpers the suite draws inputs with, so every generated input replays from its seed. */
export class Prng {
  readonly next: () => number

  constructor(readonly seed: number) {
    this.next = mulberry32(seed)
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
