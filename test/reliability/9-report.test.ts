/**
 * Last of the suite (files run in name order): every error body the suite
 * received, scanned once more; then the figures are written to
 * results/latest.json and into docs/reliability.md.
 */
import { describe, expect, it } from 'vitest'
import { collect, writeReport } from './lib/report.js'

const EXPECTED = [
  '1-load-node',
  '2-load-workers',
  '3-faults-node',
  '4-faults-workers',
  '5-bad-input',
  '6-security-do-rpc',
  '6-security-node',
  '6-security-workers',
  '7-keep-alive-node',
  '7-keep-alive-workers',
]

describe('the whole suite', () => {
  const latest = collect()

  it('writes results/latest.json and the figures of docs/reliability.md', () => {
    writeReport(latest)
    expect(latest.sections.map((s) => s.section)).toEqual(EXPECTED)
  })

  it('no error response of the whole suite carries a stack trace or a file path', () => {
    expect(latest.totals.errorBodiesScanned).toBeGreaterThan(5_000)
    expect(latest.totals.leaks).toEqual([])
  })

  it('never answered 500 except where a test provoked it', () => {
    // 500s come only from the fault tests (the poison input, wrong-length batches).
    const unexpected = latest.sections.filter((s) => s.section !== '3-faults-node' && Object.keys(s.byStatus).some((k) => k.startsWith('5') && k !== '503'))
    expect(unexpected.map((s) => `${s.section}: ${JSON.stringify(s.byStatus)}`)).toEqual([])
  })
})
