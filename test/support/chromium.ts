import { existsSync } from 'node:fs'

/** Debian's Chromium, which .ci/run installs: the browser tests drive it with playwright-core. */
export const CHROMIUM = '/usr/bin/chromium'

/**
 * The browser tests never skip: a machine without Chromium fails them with
 * the command that fixes it, so a CI run without a browser cannot pass
 * quietly. Call it first in the suite's beforeAll.
 */
export function requireChromium(): string {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: the browser tests need Chromium (apt-get install chromium; .ci/run does it)`)
  }
  return CHROMIUM
}
