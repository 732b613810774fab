/**
 * The PNG decoder inflates with the runtime's zlib on Node and workerd
 * (examples/shared/inflate/zlib.ts) and with fflate in browsers
 * (examples/shared/inflate/fflate.ts). Both keep one contract, checked here
 * on each: the bytes, undefined past the limit however far the stream
 * would expand, an error for a corrupt stream.
 */
import { zlibSync } from 'fflate'
import { describe, expect, it } from 'vitest'
import * as fflate from '../../../examples/shared/inflate/fflate.js'
import * as zlib from '../../../examples/shared/inflate/zlib.js'
import { seededBytes } from '../../support/prng.js'

for (const [name, { inflateAtMost }] of Object.entries({ zlib, fflate })) {
  describe(`inflateAtMost with ${name}`, () => {
    const data = seededBytes(10_000, 3)
    const stream = zlibSync(data)

    it('gives the bytes when they fit the limit, exactly or with room to spare', () => {
      for (const limit of [10_000, 10_001, 1 << 20]) expect(Buffer.from(inflateAtMost(stream, limit)!).equals(Buffer.from(data))).toBe(true)
    })

    it('gives undefined when the stream inflates past the limit, by one byte or by far', () => {
      expect(inflateAtMost(stream, 9_999)).toBeUndefined()
      const bomb = zlibSync(new Uint8Array(64 * 1024 * 1024)) // 64 MiB of zeros in about 64 KB
      expect(bomb.length).toBeLessThan(100_000)
      expect(inflateAtMost(bomb, 100)).toBeUndefined()
    })

    it('throws on a corrupt stream: cut short, or not zlib at all', () => {
      expect(() => inflateAtMost(stream.subarray(0, stream.length >> 1), 20_000)).toThrow()
      expect(() => inflateAtMost(new TextEncoder().encode('not a zlib stream'), 100)).toThrow()
    })
  })
}
