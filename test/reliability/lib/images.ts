/** Broken images built from the OCR fixtures: truncated, bit-flipped, lying headers, zlib bombs. */
import { readFileSync } from 'node:fs'
import { zlibSync } from 'fflate'
import type { Prng } from './prng.js'
import { PNG_SIGNATURE, craftPng } from '../../support/png.js'

const FIXTURES = new URL('../../fixtures/ocr/', import.meta.url)

export interface Fixture {
  file: string
  angle: 0 | 180
  bytes: Uint8Array
  type: string
}

export function ocrFixtures(): Fixture[] {
  const manifest = JSON.parse(readFileSync(new URL('manifest.json', FIXTURES), 'utf8')) as { images: { file: string; angle: 0 | 180 }[] }
  return manifest.images.map(({ file, angle }) => ({
    file,
    angle,
    bytes: new Uint8Array(readFileSync(new URL(file, FIXTURES))),
    type: file.endsWith('.png') ? 'image/png' : 'image/jpeg',
  }))
}

/** A PNG whose IHDR says width x height (8-bit gray unless told), with `idat` as its compressed data. */
export const png = (width: number, height: number, idat: Uint8Array, colorType = 0, depth = 8): Uint8Array =>
  craftPng(width, height, idat, { colorType, depth })

let bomb: Uint8Array | undefined

/** One broken image and what it claims to be. */
export function brokenImage(prng: Prng, fixtures: Fixture[]): { name: string; bytes: Uint8Array; type: string } {
  const pngs = fixtures.filter((f) => f.type === 'image/png')
  const jpegs = fixtures.filter((f) => f.type === 'image/jpeg')
  switch (prng.int(0, 11)) {
    case 0: {
      const f = prng.pick(pngs)
      return { name: 'truncated PNG', bytes: f.bytes.slice(0, prng.int(1, f.bytes.length - 13)), type: 'image/png' }
    }
    case 1: {
      const f = prng.pick(jpegs)
      return { name: 'truncated JPEG', bytes: f.bytes.slice(0, prng.int(1, f.bytes.length - 200)), type: 'image/jpeg' }
    }
    case 2:
      return { name: 'random bytes', bytes: prng.bytes(prng.int(1, 4096)), type: prng.pick(['image/png', 'image/jpeg', 'application/octet-stream']) }
    case 3: {
      const bytes = prng.bytes(prng.int(8, 2048))
      bytes.set(PNG_SIGNATURE)
      return { name: 'PNG magic then random bytes', bytes, type: 'image/png' }
    }
    case 4: {
      const bytes = prng.bytes(prng.int(3, 2048))
      bytes.set([0xff, 0xd8, 0xff])
      return { name: 'JPEG magic then random bytes', bytes, type: 'image/jpeg' }
    }
    case 5: {
      const side = prng.pick([4097, 65535, 1 << 20, 0x7fffffff, 0xffffffff])
      return { name: 'PNG header claiming a huge size', bytes: png(side, prng.pick([side, 1, 48]), zlibSync(new Uint8Array(64))), type: 'image/png' }
    }
    case 6:
      return { name: 'PNG header claiming 0 pixels', bytes: png(prng.pick([0, 10]), 0, zlibSync(new Uint8Array(8))), type: 'image/png' }
    case 7:
      // 10x10 gray needs 110 bytes inflated; this inflates to 8 MB.
      return { name: 'PNG zlib bomb', bytes: (bomb ??= png(10, 10, zlibSync(new Uint8Array(8 * 1024 * 1024)))), type: 'image/png' }
    case 8:
      return { name: 'PNG with too little data', bytes: png(4000, 4000, zlibSync(new Uint8Array(100))), type: 'image/png' }
    case 9: {
      const f = prng.pick(pngs)
      const bytes = f.bytes.slice()
      for (let i = 0; i < 4; i++) {
        const at = prng.int(33, bytes.length - 1)
        bytes[at] = bytes[at]! ^ (1 << prng.int(0, 7))
      }
      return { name: 'bit-flipped PNG', bytes, type: 'image/png' }
    }
    case 10: {
      // A JPEG whose frame header (SOF0) claims 65535 x 65535.
      const bytes = Uint8Array.from([0xff, 0xd8, 0xff, 0xc0, 0x00, 0x11, 0x08, 0xff, 0xff, 0xff, 0xff, 0x03, 1, 0x11, 0, 2, 0x11, 1, 3, 0x11, 1, 0xff, 0xd9])
      return { name: 'JPEG header claiming a huge size', bytes, type: 'image/jpeg' }
    }
    default: {
      const f = prng.pick(pngs)
      return { name: 'PNG sent as JPEG', bytes: f.bytes.slice(0, 40), type: 'image/jpeg' }
    }
  }
}
