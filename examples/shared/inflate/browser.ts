/**
 * Inflating a zlib stream in browsers, which have no synchronous native
 * inflate: in WebAssembly (./wasm.ts) for any output a page's image may
 * have, and with fflate (./fflate.ts), which inflates a slice at a time,
 * where the limit is larger than the WebAssembly's memory should grow.
 * package.json's "#example-inflate" picks this module for browsers.
 */
import * as fflate from './fflate.js'
import * as wasm from './wasm.js'

/**
 * The bytes a zlib stream inflates to, or undefined if that is more than
 * `limit`. Throws on a corrupt stream.
 */
export function inflateAtMost(stream: Uint8Array, limit: number): Uint8Array | undefined {
  return limit <= wasm.WASM_MAX_OUTPUT ? wasm.inflateAtMost(stream, limit) : fflate.inflateAtMost(stream, limit)
}
