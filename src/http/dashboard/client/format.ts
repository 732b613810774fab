/**
 * Browser code, shipped as text (see stats.ts for why): number formatting.
 * Values and units are returned apart so the page can set units in a
 * smaller, muted type next to tabular figures.
 */
export const FORMAT_JS = /* js */ `
// ---- format: numbers for people -------------------------------------------

const DASH = '\\u2014'

/** [value, unit] for a per-second rate. */
function formatRate(value) {
  if (value === null || value === undefined || !Number.isFinite(value)) return [DASH, '']
  if (value === 0) return ['0', '']
  if (value < 10) return [value.toFixed(1), '']
  if (value < 1000) return [String(Math.round(value)), '']
  return [(value / 1000).toFixed(value < 10000 ? 2 : 1), 'k']
}

/** [value, unit] for a duration in seconds: µs, ms or s, three significant figures at most. */
function formatSeconds(seconds) {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return [DASH, '']
  if (seconds === 0) return ['0', 'ms']
  if (seconds < 0.001) return [String(Math.round(seconds * 1e6)), '\\u00b5s']
  if (seconds < 1) return [trim(seconds * 1000), 'ms']
  return [trim(seconds), 's']
}

/** Three significant figures without trailing zeros (2.50 -> 2.5, 120.0 -> 120). */
function trim(value) {
  const digits = value < 10 ? 2 : value < 100 ? 1 : 0
  return String(Number(value.toFixed(digits)))
}

function formatCount(value) {
  if (value === null || value === undefined || !Number.isFinite(value)) return DASH
  return Math.round(value).toLocaleString('en-US')
}

function formatPercent(share) {
  if (share === null || share === undefined || !Number.isFinite(share)) return [DASH, '']
  const percent = share * 100
  return [percent === 0 ? '0' : percent < 1 ? percent.toFixed(2) : trim(percent), '%']
}

/** Compact axis labels: 1.2k, 2.5 ms. */
function axisRate(value) {
  const [number, unit] = formatRate(value)
  return number + unit + '/s'
}

function axisSeconds(value) {
  const [number, unit] = formatSeconds(value)
  return number + ' ' + unit
}

/** An option's value as text; JSON has no Infinity, so the server may already have said it in words. */
function formatOption(value) {
  if (value === null || value === undefined) return DASH
  if (typeof value === 'object') return JSON.stringify(value)
  return String(value)
}
`
