/**
 * The direction classifier's preprocessing runs WebAssembly assembled from
 * examples/ocr-direction/wasm/preprocess.wat. The assembled files are
 * committed (a clean clone runs without a build step), so an edit to the
 * source that was not followed by `npm run build:wasm` must fail here
 * rather than run the old code.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { BYTES_MODULE, WASM, WAT, assemble, bytesModule } from '../../../scripts/build-wasm.js'

describe('the preprocessing WebAssembly', () => {
  it('is what preprocess.wat assembles to, in both committed forms', async () => {
    const bytes = await assemble(WAT)
    expect(Buffer.from(readFileSync(WASM)).equals(Buffer.from(bytes)), 'preprocess.wasm is stale: run npm run build:wasm').toBe(true)
    expect(readFileSync(BYTES_MODULE, 'utf8'), 'preprocess-bytes.ts is stale: run npm run build:wasm').toBe(bytesModule(bytes))
  })
})
