/**
 * Clears the previous run's per-section figures, and bounds the whole suite:
 * past SUITE_LIMIT_MS the run is stopped rather than left to hang.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { SECTIONS_DIR, SUITE_LIMIT_MS } from './lib/record.js'

export default function setup() {
  rmSync(SECTIONS_DIR, { recursive: true, force: true })
  mkdirSync(SECTIONS_DIR, { recursive: true })
  const started = Date.now()
  writeFileSync(`${SECTIONS_DIR}_run.txt`, new Date(started).toISOString())
  const watchdog = setTimeout(() => {
    console.error(`reliability suite: still running after ${SUITE_LIMIT_MS / 1000} s, stopping it`)
    process.exit(1)
  }, SUITE_LIMIT_MS)
  watchdog.unref()
  return () => {
    clearTimeout(watchdog)
    console.log(`reliability suite: ${((Date.now() - started) / 1000).toFixed(1)} s`)
  }
}
