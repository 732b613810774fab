/**
 * The README is read first and whole, and the benchmarks page is read for its
 * tables: each holds to a length a reader gets through. Past it, the page has
 * grown guide material or rows that belong elsewhere.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT } from '../support/spawn-server.js'

const LIMITS = [
  {
    page: 'README.md',
    lines: 400,
    fix: 'move guide material to the guide it belongs to under docs/ and link to it; keep the Install sections whole, as test/package follows them word for word',
  },
  {
    page: 'docs/benchmarks.md',
    lines: 300,
    fix: 'keep the tables that carry a ratio or a figure the docs cite, and fold the rest into a line (edit bench/template.md or bench/report.ts, then `npx tsx bench/render.ts`)',
  },
]

const linesOf = (page: string) => readFileSync(join(ROOT, page), 'utf8').replace(/\n$/, '').split('\n').length

describe('page lengths', () => {
  for (const { page, lines, fix } of LIMITS) {
    it(`${page} is at most ${lines} lines`, () => {
      const length = linesOf(page)
      expect(length, `${page} is ${length} lines, past its ${lines}: ${fix}`).toBeLessThanOrEqual(lines)
    })
  }
})
