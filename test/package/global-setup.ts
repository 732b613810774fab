/**
 * Packs the tarball the package tests install: `npm pack`, which builds
 * dist/ first (the prepack script), exactly as `npm publish` would.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { TestProject } from 'vitest/node'
import { ROOT } from '../support/spawn-server.js'

const exec = promisify(execFile)

export default async function setup(project: TestProject): Promise<() => void> {
  const dir = mkdtempSync(join(tmpdir(), 'edgeserve-package-'))
  const { stdout } = await exec('npm', ['pack', '--json', '--pack-destination', dir], { cwd: ROOT, timeout: 180_000, maxBuffer: 16 * 1024 * 1024 })
  // Lifecycle output may precede the JSON on stdout.
  const [packed] = JSON.parse(stdout.slice(stdout.search(/^\[/m))) as { filename: string; size: number; unpackedSize: number; entryCount: number }[]
  if (!packed) throw new Error(`npm pack reported nothing:\n${stdout}`)
  console.log(
    `package tests: ${packed.filename}, ${packed.entryCount} files, ${(packed.size / 1000).toFixed(1)} kB packed, ${(packed.unpackedSize / 1000).toFixed(1)} kB unpacked`,
  )
  project.provide('tarball', join(dir, packed.filename))
  project.provide('projectsDir', join(dir, 'projects'))
  return () => rmSync(dir, { recursive: true, force: true })
}
