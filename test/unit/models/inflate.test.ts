/**
 * The PNG decoder inflates with the runtime's zlib on Node and workerd
 * (examples/shared/inflate/zlib.ts) and in browsers with WebAssembly
 * (examples/shared/inflate/wasm.ts), or fflate (fflate.ts) for outputs past
 * what the WebAssembly takes, as browser.ts picks. Each keeps one
 * contract, checked here on each: the bytes, undefined past the limit
 * however far the stream would expand, an error for a corrupt stream. The
 * WebAssembly, an inflate of our own, is also checked against node:zlib on
 * streams of every kind zlib writes, and on corrupt ones.
 */
import { readFileSync } from 'node:fs'
import { constants, deflateSync, inflateSync } from 'node:zlib'
import { zlibSync } from 'fflate'
import { describe, expect, it } from 'vitest'
import { INFLATE_BYTES_MODULE, INFLATE_WAT, assemble, bytesModule } from '../../../scripts/build-wasm.js'
import * as browser from '../../../examples/shared/inflate/browser.js'
import * as fflate from '../../../examples/shared/inflate/fflate.js'
import * as wasm from '../../../examples/shared/inflate/wasm.js'
import * as zlib from '../../../examples/shared/inflate/zlib.js'
import { seededBytes } from '../../support/prng.js'

for (const [name, { inflateAtMost }] of Object.entries({ zlib, fflate, wasm, browser })) {
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

describe('inflate in WebAssembly against node:zlib', () => {
  // A small generator of its own: the streams must differ in kind, not only in bytes.
  let seed = 12345
  const random = (): number => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32
  const kinds: ((n: number) => Uint8Array)[] = [
    (n) => Uint8Array.from({ length: n }, () => random() * 256), // incompressible: stored blocks
    (n) => Uint8Array.from({ length: n }, () => (random() < 0.9 ? 255 : random() * 256)), // an image's white with ink
    (n) => Uint8Array.from({ length: n }, (_, i) => (i % 37) ^ (random() < 0.05 ? 7 : 0)), // rows that repeat
    (n) => Uint8Array.from({ length: n }, () => 'abcdefghijklmnopqrstuvwxyz'.charCodeAt(Math.floor(random() ** 3 * 26))), // skewed text: long codes
    // Text, then noise: a stored block after Huffman-coded ones, whose lookahead has read into it.
    (n) => Uint8Array.from({ length: n }, (_, i) => (i < n / 2 ? 'abcab'.charCodeAt(Math.floor(random() * 5)) : random() * 256)),
  ]
  const strategies = [constants.Z_DEFAULT_STRATEGY, constants.Z_FILTERED, constants.Z_HUFFMAN_ONLY, constants.Z_RLE, constants.Z_FIXED]

  it('inflates what zlib deflates, at every level and strategy, to the byte, and refuses one byte less room', () => {
    for (let t = 0; t < 400; t++) {
      const data = kinds[t % kinds.length]!(Math.floor(random() ** 3 * 100_000))
      const stream = deflateSync(data, { level: [0, 1, 6, 9][t % 4]!, strategy: strategies[Math.floor(t / 4) % strategies.length]! })
      const out = wasm.inflateAtMost(stream, data.length)
      expect(out && Buffer.from(out).equals(data), `stream ${t}`).toBe(true)
      if (data.length > 0) expect(wasm.inflateAtMost(stream, data.length - 1), `stream ${t}`).toBeUndefined()
    }
  })

  it('throws where zlib throws on a corrupt stream, and gives what zlib gives otherwise', () => {
    for (let t = 0; t < 1000; t++) {
      const stream = Uint8Array.from(deflateSync(kinds[t % kinds.length]!(1 + Math.floor(random() * 20_000))))
      const corrupt = stream.slice(0, random() < 0.3 ? Math.floor(random() * stream.length) : stream.length)
      for (let k = 0; k < 1 + random() * 4 && corrupt.length > 2; k++) corrupt[2 + Math.floor(random() * (corrupt.length - 2))]! ^= 1 << Math.floor(random() * 8)
      let expected: Buffer | undefined
      try {
        expected = inflateSync(corrupt)
      } catch {
        expected = undefined
      }
      if (expected === undefined) expect(() => wasm.inflateAtMost(corrupt, 40_000), `stream ${t}`).toThrow(/corrupt zlib stream/)
      else expect(Buffer.from(wasm.inflateAtMost(corrupt, 40_000)!).equals(expected), `stream ${t}`).toBe(true)
    }
  })

  it('is what inflate.wat assembles to', async () => {
    const bytes = await assemble(INFLATE_WAT)
    expect(readFileSync(INFLATE_BYTES_MODULE, 'utf8'), 'inflate-bytes.ts is stale: run npm run build:wasm').toBe(bytesModule(bytes, INFLATE_WAT))
  })

  it('refuses a limit past what its memory may grow to; browser.ts sends those to fflate', () => {
    const stream = zlibSync(new Uint8Array(10))
    expect(() => wasm.inflateAtMost(stream, wasm.WASM_MAX_OUTPUT + 1)).toThrow(RangeError)
    expect(browser.inflateAtMost(stream, wasm.WASM_MAX_OUTPUT + 1)).toEqual(new Uint8Array(10))
  })
})
