/**
 * Decode + preprocess of the bench's image in Chromium, as the OCR route's
 * requests and batches do it (../prepare-work.ts; bench/prepare.ts loads
 * this page). Windows of 200 ms, ms per image in each: Chromium's clock is
 * coarse (100 µs), a window is not.
 */
import { prepareImages } from '../prepare-work.js'

async function measure(windows: number): Promise<number[]> {
  const bytes = new Uint8Array(await (await fetch('./image.png')).arrayBuffer())
  const window = (ms: number): number => {
    let n = 0
    const t0 = performance.now()
    while (performance.now() - t0 < ms) {
      prepareImages(bytes, 32)
      n += 32
    }
    return (performance.now() - t0) / n
  }
  window(500) // tier-up
  return Array.from({ length: windows }, () => window(200))
}

;(globalThis as { measurePrepare?: typeof measure }).measurePrepare = measure
