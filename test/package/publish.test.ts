/**
 * What npm would publish: `npm publish --dry-run` passes, and the tarball
 * holds what a user needs (every export and import target outside the
 * repository's own "edgeserve-source" branches, the bin, LICENSE) and none
 * of the repository's tests, examples, benchmarks or docs.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it, inject } from 'vitest'
import { ROOT } from '../support/spawn-server.js'
import { mustRun } from './lib/consumer.js'

type Conditions = string | { [condition: string]: Conditions }

/** Every target a user's resolver can reach: all branches but "edgeserve-source". */
function targets(value: Conditions): string[] {
  if (typeof value === 'string') return [value]
  return Object.entries(value).flatMap(([condition, inner]) => (condition === 'edgeserve-source' ? [] : targets(inner)))
}

const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  exports: Record<string, Conditions>
  imports: Record<string, Conditions>
  bin: Record<string, string>
  license: string
}

describe('the published package', () => {
  it('passes `npm publish --dry-run`', async () => {
    const { stdout, stderr } = await mustRun('npm', ['publish', '--dry-run'], ROOT, 180_000)
    expect(stdout).toContain('+ edgeserve@')
    expect(stderr).not.toMatch(/auto-corrected|npm error/i)
  }, 200_000)

  it('ships every export and import target, the bin and LICENSE, and no tests, examples, benchmarks or docs', () => {
    const files = new Set(
      execFileSync('tar', ['-tzf', inject('tarball')], { encoding: 'utf8' })
        .split('\n')
        .filter(Boolean)
        .map((path) => path.replace(/^package\//, '')),
    )
    const wanted = [
      ...Object.values(manifest.exports).flatMap(targets),
      ...Object.values(manifest.imports).flatMap(targets),
      ...Object.values(manifest.bin),
      'LICENSE',
      'README.md',
      'CHANGELOG.md',
      'dist/src/runtime/node/threads/bootstrap.mjs',
      'dist/src/runtime/node/threads/worker.js',
      'dist/src/runtime/node/cli.js',
    ].map((path) => path.replace(/^\.\//, ''))
    expect(wanted.filter((path) => !files.has(path))).toEqual([])
    expect([...files].filter((path) => /^(test|examples|bench|docs|scripts|generated)\/|^src\/http\/dashboard\/client\//.test(path))).toEqual([])
    // The examples wire themselves in examples/package.json: no export or import of the package reaches them.
    expect(JSON.stringify([manifest.exports, manifest.imports])).not.toContain('examples/')
    expect(manifest.license).toBe('Apache-2.0')
    expect(readFileSync(join(ROOT, 'LICENSE'), 'utf8')).toContain('Apache License\n                           Version 2.0, January 2004')
  })
})
