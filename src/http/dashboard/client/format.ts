/**
 * Numbers for people. Values and units are returned apart so the page can
 * set units in a smaller, muted type next to tabular figures.
 */

export const DASH = '\u2014'

/** A figure and its unit, shown side by side. */
export type Figure = [value: string, unit: string]

/** A number to show; null, undefined, NaN and Infinity show as a dash. */
const finite = (value: number | null | undefined): value is number => typeof value === 'number' && Number.isFinite(value)

/** [value, unit] for a per-second rate. */
export function formatRate(value: number | null | undefined): Figure {
  if (!finite(value)) return [DASH, '']
  if (value === 0) return ['0', '']
  if (value < 10) return [value.toFixed(1), '']
  if (value < 1000) return [String(Math.round(value)), '']
  return [(value / 1000).toFixed(value < 10000 ? 2 : 1), 'k']
}

/** [value, unit] for a duration in seconds: µs, ms or s, three significant figures at most. */
export function formatSeconds(seconds: number | null | undefined): Figure {
  if (!finite(seconds)) return [DASH, '']
  if (seconds === 0) return ['0', 'ms']
  if (seconds < 0.001) return [String(Math.round(seconds * 1e6)), '\u00b5s']
  if (seconds < 1) return [trim(seconds * 1000), 'ms']
  return [trim(seconds), 's']
}

/** Three significant figures without trailing zeros (2.50 -> 2.5, 120.0 -> 120). */
export function trim(value: number): string {
  const digits = value < 10 ? 2 : value < 100 ? 1 : 0
  return String(Number(value.toFixed(digits)))
}

export function formatCount(value: number | null | undefined): string {
  if (!finite(value)) return DASH
  return Math.round(value).toLocaleString('en-US')
}

export function formatPercent(share: number | null | undefined): Figure {
  if (!finite(share)) return [DASH, '']
  const percent = share * 100
  return [percent === 0 ? '0' : percent < 1 ? percent.toFixed(2) : trim(percent), '%']
}

/** Compact axis labels: 1.2k/s, 2.5 ms. */
export function axisRate(value: number): string {
  const [number, unit] = formatRate(value)
  return number + unit + '/s'
}

export function axisSeconds(value: number): string {
  const [number, unit] = formatSeconds(value)
  return number + ' ' + unit
}

/** An option's value as text; JSON has no Infinity, so the server may already have said it in words. */
export function formatOption(value: unknown): string {
  if (value === null || value === undefined) return DASH
  if (typeof value === 'string') return value
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  // An object or a list: the rest of what JSON holds.
  return JSON.stringify(value)
}
