/**
 * Inflating a zlib stream in WebAssembly (./wasm/inflate.wat): what
 * browsers use for the PNGs of the examples, which have no synchronous
 * native inflate. A text line's 700 bytes take about 15 µs to decode and
 * 25 with the checksum and the copy out, where fflate's JavaScript takes
 * about 40 (Node, bench/limits.md).
 *
 * The output is written in the module's memory, which grows to hold the
 * largest image yet: ./browser.ts sends only outputs up to WASM_MAX_OUTPUT
 * here, so a page keeps at most that much.
 */
import { growMemoryTo, moduleFromBase64 } from '../wasm-module.js'
import { base64 } from './wasm/inflate-bytes.js'

/** The most output this module is asked for: past it, ./browser.ts uses fflate. */
export const WASM_MAX_OUTPUT = 8 * 1024 * 1024

/** Status codes the module sets before it traps (see inflate.wat). */
const OVER_LIMIT = 2

interface InflateExports {
  memory: WebAssembly.Memory
  heapBase: WebAssembly.Global
  status: WebAssembly.Global
  inflate(inAt: number, inLength: number, outAt: number, outCapacity: number): number
  consumed(): number
  adler32(at: number, length: number): number
}

let instance: InflateExports | undefined

/** One instance per realm, made on first use; every call into it is synchronous, so two never share it at once. */
function inflater(): InflateExports {
  if (instance) return instance
  instance = new WebAssembly.Instance(moduleFromBase64(base64)).exports as unknown as InflateExports
  return instance
}

/**
 * The bytes a zlib stream inflates to, or undefined if that is more than
 * `limit` (at most WASM_MAX_OUTPUT): inflating stops at the limit, so a
 * small stream that expands far costs little. Throws on a corrupt stream,
 * its Adler-32 checksum included.
 */
export function inflateAtMost(stream: Uint8Array, limit: number): Uint8Array | undefined {
  if (limit > WASM_MAX_OUTPUT) throw new RangeError(`inflateAtMost here takes limits up to ${WASM_MAX_OUTPUT} bytes, got ${limit}`)
  checkHeader(stream)
  const wasm = inflater()
  const inAt = wasm.heapBase.value as number
  const inLength = stream.length - 2
  const outAt = inAt + ((inLength + 7) & ~7)
  const { memory } = wasm
  growMemoryTo(memory, outAt + limit)
  new Uint8Array(memory.buffer, inAt, inLength).set(stream.subarray(2))
  let produced: number
  try {
    produced = wasm.inflate(inAt, inLength, outAt, limit)
  } catch (error) {
    if (!(error instanceof WebAssembly.RuntimeError)) throw error
    if (wasm.status.value === OVER_LIMIT) return undefined
    throw new Error('corrupt zlib stream: its deflate data does not decode')
  }
  const trailerAt = wasm.consumed()
  if (trailerAt + 4 > inAt + inLength) throw new Error('corrupt zlib stream: it ends before its checksum')
  if (new DataView(memory.buffer).getUint32(trailerAt) !== wasm.adler32(outAt, produced) >>> 0) {
    throw new Error('corrupt zlib stream: its checksum does not match its data')
  }
  return new Uint8Array(memory.buffer, outAt, produced).slice()
}

/** RFC 1950's two header bytes: deflate, a window of at most 32 KB, no preset dictionary, and the check bits. */
function checkHeader(stream: Uint8Array): void {
  const [method = 0, flags = 0] = stream
  const valid = stream.length >= 6 && (method & 15) === 8 && method >> 4 <= 7 && ((method << 8) | flags) % 31 === 0 && (flags & 32) === 0
  if (!valid) throw new Error('corrupt zlib stream: not a zlib header')
}
