/**
 * Worker bundles as `wrangler deploy --dry-run` builds them: the demo within
 * the Workers size limit, and the dashboard page only in Workers that ask
 * for it.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { gzipSync } from 'node:zlib'
import { expect, it } from 'vitest'
import { dashboard } from '../../src/http/dashboard/index.js'
import { ROOT } from '../support/spawn-server.js'

const run = promisify(execFile)
/** Workers Paid: 10 MiB compressed (Free: 3 MiB, which ORT's 3.7 MB of WebAssembly alone exceeds). */
const PAID_LIMIT = 10 * 1024 * 1024

/** Build a Worker without deploying it; `files` maps each output file (maps and README left out) to its bytes. */
async function dryRun(args: string[], check: (files: Map<string, Buffer>) => void): Promise<void> {
  const outdir = mkdtempSync(join(tmpdir(), 'edgeserve-bundle-'))
  try {
    const { stdout } = await run(process.execPath, ['node_modules/wrangler/bin/wrangler.js', 'deploy', '--dry-run', '--outdir', outdir, ...args], {
      cwd: ROOT,
      env: { ...process.env, WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1' },
      timeout: 120_000,
    })
    expect(stdout).toContain('--dry-run: exiting now.')
    const names = readdirSync(outdir).filter((f) => !f.endsWith('.map') && f !== 'README.md')
    check(new Map(names.map((name) => [name, readFileSync(join(outdir, name))])))
  } finally {
    rmSync(outdir, { recursive: true, force: true })
  }
}

/** The page's script hash is ASCII, so it survives wrangler's re-escaping of the page's string. */
const holdsDashboard = (files: Map<string, Buffer>) => [...files.values()].some((bytes) => bytes.includes(dashboard.scriptHash))

it('builds the demo within the Workers paid-plan limit, with the dashboard it serves', async () => {
  await dryRun([], (files) => {
    const names = [...files.keys()]
    expect(names.some((f) => f.endsWith('ort-wasm-simd-threaded.wasm'))).toBe(true)
    // House price, its three regional models, the text generator and the OCR direction classifier.
    expect(names.filter((f) => f.endsWith('.onnx'))).toHaveLength(6)
    const gzipped = [...files.values()].reduce((sum, bytes) => sum + gzipSync(bytes).byteLength, 0)
    expect(gzipped).toBeLessThan(PAID_LIMIT)
    expect(holdsDashboard(files)).toBe(true)
  })
}, 150_000)

it('leaves the dashboard page out of a Worker that does not import edgeserve/dashboard', async () => {
  const config = ['--config', 'test/fixtures/tiny-worker/wrangler.toml']
  await dryRun(config, (files) => expect(holdsDashboard(files)).toBe(false))
  await dryRun([...config, 'test/fixtures/tiny-worker/worker-with-dashboard.ts'], (files) => expect(holdsDashboard(files)).toBe(true))
}, 150_000)
