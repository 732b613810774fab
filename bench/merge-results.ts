/**
 * For a bench piece run alone: put its section into bench/results/latest.json
 * in place of the last one and regenerate docs/benchmarks.md, so its rows
 * land without a whole `npm run bench` (which passes such pieces
 * `--print-only` and writes everything itself). Without a latest.json there
 * is no report to regenerate: the section goes to bench/results/<key>.json.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { ROOT } from './lib.js'
import { renderReport, type BenchResults } from './report.js'

/** `entries`: keys to add to the results' own dictionaries (`ratios`, `ratioNotes`) beside the section. */
export function mergeIntoResults(key: string, section: unknown, entries: Record<string, Record<string, unknown>> = {}): void {
  const latest = `${ROOT}/bench/results/latest.json`
  if (!existsSync(latest)) {
    writeFileSync(`${ROOT}/bench/results/${key}.json`, JSON.stringify(section, null, 2) + '\n')
    console.error(`bench: no bench/results/latest.json to merge into; wrote bench/results/${key}.json`)
    return
  }
  const results = { ...(JSON.parse(readFileSync(latest, 'utf8')) as Record<string, unknown>), [key]: section }
  for (const [name, added] of Object.entries(entries)) results[name] = { ...(results[name] as Record<string, unknown> | undefined), ...added }
  writeFileSync(latest, JSON.stringify(results, null, 2) + '\n')
  // The run's own results with this section in place: the shape bench/run.ts wrote.
  const { markdown } = renderReport(results as BenchResults, readFileSync(`${ROOT}/bench/template.md`, 'utf8'))
  writeFileSync(`${ROOT}/docs/benchmarks.md`, markdown)
  console.error(`bench: merged ${key} into bench/results/latest.json and regenerated docs/benchmarks.md`)
}
