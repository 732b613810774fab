/**
 * The bench's Worker in workerd without `wrangler dev`: wrangler builds the
 * bundle once (`wrangler deploy --dry-run`, as a deploy would), and
 * Miniflare runs it in workerd, whose own socket serves the URL printed as
 * `READY <url>`. No proxy worker and no Node process sits between the load
 * and the Worker, so these rows are workerd's, and the `wrangler dev` rows
 * beside them show what its proxy adds.
 *
 *   WRANGLER_BUILD_CONDITIONS=edgeserve-source,workerd,worker,browser tsx bench/workerd-direct.ts
 *
 * Miniflare reads MINIFLARE_WORKERD_V8_FLAGS as wrangler dev does; the bench
 * sets `--initial-old-space-size=8` for both (test/support/wrangler-dev.ts says why).
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Miniflare } from 'miniflare'
import { unstable_readConfig } from 'wrangler'
import { ROOT } from './lib.js'

const CONFIG = join(ROOT, 'bench/wrangler.toml')
const outdir = mkdtempSync(join(tmpdir(), 'edgeserve-bench-worker-'))
execFileSync(process.execPath, [join(ROOT, 'node_modules/wrangler/bin/wrangler.js'), 'deploy', '--dry-run', '--outdir', outdir, '-c', CONFIG], {
  cwd: ROOT,
  stdio: ['ignore', 'ignore', 'inherit'],
})

const NAME = 'edgeserve-bench'
/** The bundle's modules as a deploy uploads them: the entry, and the files it imports by name (WebAssembly, models). */
const TYPES = { js: 'esm', wasm: 'wasm', onnx: 'data' } as const
const modules = Object.fromEntries(
  readdirSync(outdir)
    .filter((file) => /\.(js|wasm|onnx)$/.test(file))
    .map((file) => [file, { type: TYPES[file.slice(file.lastIndexOf('.') + 1) as keyof typeof TYPES], contents: new Uint8Array(readFileSync(join(outdir, file))) }]),
)

// Bindings, Durable Object classes and compatibility settings from the same config wrangler dev reads.
const config = unstable_readConfig({ config: CONFIG })
const bindings: { name: string; class_name: string }[] = config.durable_objects.bindings
// Miniflare keeps Durable Objects in memory unless told to persist them: each run starts from fresh objects.
const mf = new Miniflare({
  host: '127.0.0.1',
  port: 0,
  workers: [
    {
      config: {
        name: NAME,
        compatibilityDate: config.compatibility_date!,
        compatibilityFlags: config.compatibility_flags,
        manifest: { mainModule: 'worker.js', modulesRoot: outdir, modules },
        env: Object.fromEntries(bindings.map((b) => [b.name, { type: 'durable-object' as const, worker: NAME, exportName: b.class_name }])),
        exports: Object.fromEntries(bindings.map((b) => [b.class_name, { type: 'durable-object' as const, storage: 'sqlite' as const }])),
      },
    },
  ],
})
const url = await mf.ready
console.log(`READY ${url.href.replace(/\/$/, '')}`)

const stop = async () => {
  await mf.dispose().catch(() => undefined)
  rmSync(outdir, { recursive: true, force: true })
  process.exit(0)
}
process.once('SIGTERM', () => void stop())
process.once('SIGINT', () => void stop())
