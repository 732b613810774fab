import { median } from './lib.js'

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
 * adaptive over the fixed size that someone tuning by hand would pick from
 * the same measurements, judged on a round that did not pick it.
 *
 * For each round, the best fixed size is the one with the highest median
 * over the other rounds; adaptive's req/s in this round over that size's in
 * this round is the round's ratio; the median of those ratios counts. The
 * two rows of a round ran seconds apart, so a slow stretch of the machine
 * slows both.
 *
 * Why not pick the best size and divide by it on the same rounds: the best
 * of six noisy rows is also the luckiest. Where the sizes near the top
 * serve within a few percent of each other (the classifier from 4 to 32,
 * the MLP at 16 and 32) and a row varies by 15% from round to round, as on
 * this machine, that divides by the row whose rounds happened to read high.
 * A learner that matched the best size exactly read about 0.92 of it so
 * (three rounds; 0.95 or more in two runs in five), and the row could not
 * tell a learner that matched the best size from one that lost to it.
 * Judged on a round that did not choose it, the chosen size's luck does not
 * carry over, and such a learner reads 1.0.
 *
 * With one round there is nothing else to choose by: that round chooses.
 */
export function adaptiveVsBestFixed(rows: readonly SettingRow[]): Record<string, number> {
  const out: Record<string, number> = {}
  for (const { runtime, model } of rows.filter((r) => r.setting === 'adaptive')) {
    const group = rows.filter((r) => r.runtime === runtime && r.model === model)
    const adaptive = group.find((r) => r.setting === 'adaptive')!
    const fixed = group.filter((r) => r.setting !== 'adaptive')
    const key = `adaptive_vs_best_fixed_${model.replaceAll('-', '_')}${runtime === 'node' ? '' : `_${runtime}`}`
    out[key] = median(
      adaptive.roundsRequestsPerS.map((value, round) => {
        const best = bestByOtherRounds(fixed, round)
        return value / best.roundsRequestsPerS[round]!
      }),
    )
  }
  return out
}

/** The fixed row with the highest median req/s over the rounds other than `round` (over all of them when there is only one). */
export function bestByOtherRounds(fixed: readonly SettingRow[], round: number): SettingRow {
  const others = (row: SettingRow) => {
    const rest = row.roundsRequestsPerS.filter((_, i) => i !== round)
    return median(rest.length > 0 ? rest : row.roundsRequestsPerS)
  }
  return fixed.reduce((a, b) => (others(b) > others(a) ? b : a))
}
