/**
 * The repository's tests run edgeserve from src/: package.json's exports and
 * imports send 'edgeserve' and '#...' to dist/ unless the "edgeserve-source"
 * condition is on. Each vitest config spreads these settings, which turn it
 * on for vite's resolver (test files, fixtures, examples), for the test
 * processes themselves (and so the worker threads they start), and for the
 * processes tests spawn: Node (`edgeserve run`, tsx scripts) through
 * NODE_OPTIONS, and wrangler's bundler through WRANGLER_BUILD_CONDITIONS.
 */
import { defaultClientConditions, defaultServerConditions } from 'vite'

export const SOURCE_CONDITION = 'edgeserve-source'
const FLAG = `--conditions=${SOURCE_CONDITION}`

/** Wrangler's own default conditions, with the source one first. */
export const WRANGLER_BUILD_CONDITIONS = [SOURCE_CONDITION, 'workerd', 'worker', 'browser'].join(',')

export const sourceResolve = {
  resolve: { conditions: [SOURCE_CONDITION, ...defaultClientConditions] },
  ssr: { resolve: { conditions: [SOURCE_CONDITION, ...defaultServerConditions] } },
}

export const sourcePoolOptions = { forks: { execArgv: [FLAG] }, threads: { execArgv: [FLAG] } }

export const sourceEnv = {
  NODE_OPTIONS: [process.env.NODE_OPTIONS, FLAG].filter(Boolean).join(' '),
  WRANGLER_BUILD_CONDITIONS,
}
