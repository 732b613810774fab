/**
 * A PNG writer for tests that need files a PNG encoder would refuse to make:
 * an IHDR that lies about the size, raw IDAT bytes, extra chunks. Every
 * chunk gets a correct CRC, so a decoder gets past the checksums to the part
 * under test.
 */
/** The eight bytes every PNG starts with. */
export const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]

function crc32(bytes: Uint8Array): number {
  let crc = ~0
  for (const b of bytes) {
    crc ^= b
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1))
  }
  return ~crc >>> 0
}

/** One chunk: length, type, data, CRC. */
export function pngChunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length)
  const view = new DataView(out.buffer)
  view.setUint32(0, data.length)
  out.set(new TextEncoder().encode(type), 4)
  out.set(data, 8)
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)))
  return out
}

export interface PngParts {
  /** Bits per sample. Default 8. */
  depth?: number
  /** PNG colour type: 0 gray (default), 2 RGB, 3 palette, 4 gray + alpha, 6 RGBA. */
  colorType?: number
  /** Chunks between IHDR and IDAT (PLTE, tRNS). */
  before?: [type: string, data: Uint8Array][]
  /** Adam7-interlaced rows. Default false. */
  interlaced?: boolean
}

/** A PNG whose IHDR says `width` x `height`, with `idat` as its compressed image data, as given. */
export function craftPng(
  width: number,
  height: number,
  idat: Uint8Array,
  { depth = 8, colorType = 0, before = [], interlaced = false }: PngParts = {},
): Uint8Array<ArrayBuffer> {
  const ihdr = new Uint8Array(13)
  const view = new DataView(ihdr.buffer)
  view.setUint32(0, width)
  view.setUint32(4, height)
  ihdr.set([depth, colorType, 0, 0, interlaced ? 1 : 0], 8) // deflate, adaptive filter, interlace or none
  const parts = [
    Uint8Array.from(PNG_SIGNATURE),
    pngChunk('IHDR', ihdr),
    ...before.map(([type, data]) => pngChunk(type, data)),
    pngChunk('IDAT', idat),
    pngChunk('IEND', new Uint8Array(0)),
  ]
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let offset = 0
  for (const part of parts) {
    out.set(part, offset)
    offset += part.length
  }
  return out
}
