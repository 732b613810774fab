import { roundByRound } from './lib.js'

/** A row of the adaptive comparison: one setting (a fixed size, or 'adaptive') of one model on one runtime. */
export interface SettingRow {
  runtime: string
  model: string
  setting: string
  requestsPerS: number
  /** Each round's req/s, in the order of the rounds. */
  roundsRequestsPerS: number[]
}

/**
 * `adaptive_vs_best_fixed_<model>[_<runtime>]` for each model and runtime:
 * the best fixed size by its median, then adaptive over it round by round,
 * whose median counts. The two ran seconds apart in each round, so a slow
 * stretch of the machine slows both.
 */
export function adaptiveVsBestFixed(rows: readonly SettingRow[]): Record<string, number> {
  const out: Record<string, number> = {}
  for (const { runtime, model } of rows.filter((r) => r.setting === 'adaptive')) {
    const group = rows.filter((r) => r.runtime === runtime && r.model === model)
    const adaptive = group.find((r) => r.setting === 'adaptive')!
    const best = group.filter((r) => r.setting !== 'adaptive').reduce((a, b) => (b.requestsPerS > a.requestsPerS ? b : a))
    const key = `adaptive_vs_best_fixed_${model.replaceAll('-', '_')}${runtime === 'node' ? '' : `_${runtime}`}`
    out[key] = roundByRound(adaptive.roundsRequestsPerS, best.roundsRequestsPerS)
  }
  return out
}
