/** The demo Worker builds for deployment (`wrangler deploy --dry-run`) within the Workers size limit. */
import { execFile } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { gzipSync } from 'node:zlib'
import { expect, it } from 'vitest'
import { ROOT } from '../helpers/spawn-server.js'

const run = promisify(execFile)
/** Workers Paid: 10 MiB compressed (Free: 3 MiB, which ORT's 3.7 MB of WebAssembly alone exceeds). */
const PAID_LIMIT = 10 * 1024 * 1024

it('builds a bundle within the Workers paid-plan limit', async () => {
  const outdir = mkdtempSync(join(tmpdir(), 'edgeserve-bundle-'))
  try {
    const { stdout } = await run(process.execPath, ['node_modules/wrangler/bin/wrangler.js', 'deploy', '--dry-run', '--outdir', outdir], {
      cwd: ROOT,
      env: { ...process.env, WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1' },
      timeout: 120_000,
    })
    expect(stdout).toContain('--dry-run: exiting now.')
    const files = readdirSync(outdir).filter((f) => !f.endsWith('.map') && f !== 'README.md')
    expect(files.some((f) => f.endsWith('ort-wasm-simd-threaded.wasm'))).toBe(true)
    expect(files.filter((f) => f.endsWith('.onnx'))).toHaveLength(3)
    const gzipped = files.reduce((sum, f) => sum + gzipSync(readFileSync(join(outdir, f))).byteLength, 0)
    expect(gzipped).toBeLessThan(PAID_LIMIT)
  } finally {
    rmSync(outdir, { recursive: true, force: true })
  }
}, 150_000)
