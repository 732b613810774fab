/**
 * Builds what the npm package ships: `npm run build` (and `npm pack` /
 * `npm publish`, through the prepack script).
 *
 * - the dashboard page (scripts/build-pages.ts), copied to
 *   dist/generated/dashboard-page.js, where package.json's "#dashboard-page"
 *   import points outside the repository;
 * - tsc (tsconfig.build.json): ES modules and declarations for src/ and
 *   wasm/, each with its map, into dist/src and dist/wasm;
 * - the worker-thread bootstrap and a model instance's thread, plain
 *   JavaScript already, copied next to the compiled modules that start them.
 *
 * Inside the repository nothing reads dist/: the "edgeserve-source" export
 * condition sends every tool to src/ (see package.json and tsconfig.json).
 *
 *   npm run build
 */
import { execFileSync } from 'node:child_process'
import { copyFileSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { DASHBOARD, buildPage } from './build-pages.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const DIST = join(ROOT, 'dist')

/** Files that tsc does not emit but dist needs, as [from, to] relative to the repository. */
const COPIED: [string, string][] = [
  ['generated/dashboard-page.js', 'dist/generated/dashboard-page.js'],
  ['src/runtime/node/threads/bootstrap.mjs', 'dist/src/runtime/node/threads/bootstrap.mjs'],
  ['src/onnx/instances/instance.mjs', 'dist/src/onnx/instances/instance.mjs'],
]

function copy(from: string, to: string): void {
  mkdirSync(dirname(join(ROOT, to)), { recursive: true })
  copyFileSync(join(ROOT, from), join(ROOT, to))
}

function sizeOf(dir: string): { files: number; bytes: number } {
  let files = 0
  let bytes = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) {
      const inner = sizeOf(path)
      files += inner.files
      bytes += inner.bytes
    } else {
      files++
      bytes += statSync(path).size
    }
  }
  return { files, bytes }
}

async function buildPackage(): Promise<{ files: number; bytes: number }> {
  await buildPage(DASHBOARD)
  // A stale file from a renamed module must not ship: start from nothing.
  rmSync(DIST, { recursive: true, force: true })
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
  execFileSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json')], { cwd: ROOT, stdio: 'inherit' })
  for (const [from, to] of COPIED) copy(from, to)
  return sizeOf(DIST)
}

const built = await buildPackage()
console.log(`package: ${built.files} files, ${(built.bytes / 1024).toFixed(0)} KiB in ${relative(process.cwd(), DIST) || '.'}`)
