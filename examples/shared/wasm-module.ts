/**
 * What the examples' WebAssembly modules (the direction classifier's
 * preprocessing, the browsers' inflate) share: compiling from base64, and
 * growing a memory to hold what a call will write.
 */

const PAGE_BYTES = 65536

/**
 * A module compiled from its bytes in base64 (a generated `*-bytes.ts`):
 * synchronously, as a browser allows on its main thread for a module of a
 * few kilobytes.
 */
export function moduleFromBase64(base64: string): WebAssembly.Module {
  return new WebAssembly.Module(Uint8Array.from(atob(base64), (char) => char.charCodeAt(0)))
}

/**
 * Grow `memory` until its addresses reach `end`. True if it grew: growing
 * detaches the old buffer, and every view of it must be made again.
 */
export function growMemoryTo(memory: WebAssembly.Memory, end: number): boolean {
  const missing = end - memory.buffer.byteLength
  if (missing <= 0) return false
  memory.grow(Math.ceil(missing / PAGE_BYTES))
  return true
}
