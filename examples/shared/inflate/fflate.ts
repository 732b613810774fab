/**
 * Inflating a zlib stream with fflate, in JavaScript: what browsers use
 * (./browser.ts) for outputs larger than the WebAssembly inflate takes, a
 * slice at a time. Node and workerd use their zlib (./zlib.ts).
 */
import { Unzlib, unzlibSync } from 'fflate'

/** Deflate's densest code (a 258-byte match in 2 bits) expands data at most 1032 times. */
const MAX_DEFLATE_RATIO = 1032
/** Inflating up to this much costs milliseconds at worst, so it needs no early stop. */
const ONE_CALL_LIMIT = 4 * 1024 * 1024
/** Compressed bytes per step when a stream could expand past that: each step then inflates at most ~17 MB. */
const SLICE = 16 * 1024

/**
 * The bytes a zlib stream inflates to, or undefined if that is more than
 * `limit`: inflating stops soon after, so a small stream that expands far
 * (a "zlib bomb") costs little. Throws on a corrupt stream.
 */
export function inflateAtMost(stream: Uint8Array, limit: number): Uint8Array | undefined {
  // One byte of room past `limit` shows a stream that would overflow it.
  const out = new Uint8Array(limit + 1)
  const produced =
    stream.length * MAX_DEFLATE_RATIO <= Math.max(limit, ONE_CALL_LIMIT)
      ? // fflate writes nothing past `out`, and the ratio bounds the work.
        unzlibSync(stream, { out }).length
      : inflateInSlices(stream, out)
  return produced > limit ? undefined : out.subarray(0, produced)
}

/** Inflate into `out` a slice at a time, stopping once more than fits has come out. Returns the bytes produced (at most one slice's worth past `out`). */
function inflateInSlices(stream: Uint8Array, out: Uint8Array): number {
  let produced = 0
  const inflater = new Unzlib((chunk) => {
    if (produced + chunk.length <= out.length) out.set(chunk, produced)
    produced += chunk.length
  })
  for (let at = 0; at < stream.length && produced < out.length; at += SLICE) {
    inflater.push(stream.subarray(at, at + SLICE), at + SLICE >= stream.length)
  }
  return produced
}
