/**
 * Regenerate docs/benchmarks.md and docs/images/benchmarks.svg from
 * bench/results/latest.json, after editing bench/template.md or
 * bench/report.ts: `npx tsx bench/render.ts`. Measures nothing.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { ROOT } from './lib.js'
import { renderReport, type BenchResults } from './report.js'

const results = JSON.parse(readFileSync(`${ROOT}/bench/results/latest.json`, 'utf8')) as BenchResults
const { markdown, svg } = renderReport(results, readFileSync(`${ROOT}/bench/template.md`, 'utf8'))
writeFileSync(`${ROOT}/docs/benchmarks.md`, markdown)
writeFileSync(`${ROOT}/docs/images/benchmarks.svg`, svg)
console.error('bench/render: docs/benchmarks.md and docs/images/benchmarks.svg regenerated from bench/results/latest.json')
