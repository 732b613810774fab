/**
 * Inflating a zlib stream with the runtime's own zlib (node:zlib, native on
 * Node and, with `nodejs_compat`, on workerd): about 14 µs for a text
 * line's 700 bytes, where fflate's JavaScript takes about 50. Browsers
 * inflate in WebAssembly (./browser.ts); package.json's "#example-inflate"
 * picks the module.
 */
import { inflateSync } from 'node:zlib'

/**
 * The bytes a zlib stream inflates to, or undefined if that is more than
 * `limit`: zlib stops soon after its output passes the limit, so a small
 * stream that expands far (a "zlib bomb") costs little. Throws on a
 * corrupt stream.
 */
export function inflateAtMost(stream: Uint8Array, limit: number): Uint8Array | undefined {
  try {
    // workerd refuses an output once the buffer it grows would pass maxOutputLength, whatever
    // that buffer holds: a 480x400 page that inflates to exactly its limit was refused at it.
    // So zlib is given twice the limit (and at least 64 KB more), and the length is checked
    // here; a bomb still stops after about twice the limit.
    const out = inflateSync(stream, { maxOutputLength: limit + Math.max(limit, 65536) })
    return out.length > limit ? undefined : out
  } catch (error) {
    // Past maxOutputLength: Node throws ERR_BUFFER_TOO_LARGE, workerd "Memory limit exceeded", both
    // RangeErrors; a corrupt stream is a plain Error on both.
    if (error instanceof RangeError) return undefined
    throw error
  }
}
