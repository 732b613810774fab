/**
 * Bundle a driver script given as source text, its imports resolved from the
 * repository's root and edgeserve taken from its TypeScript source: what
 * the engine tools run where tsx's loader does not reach (under valgrind,
 * in a worker thread) or with the engine changed by a plugin.
 */
import { build, type Plugin } from 'esbuild'
import { ROOT } from './lib.js'

export async function bundleDriver(contents: string, sourcefile: string, outfile: string, plugins: Plugin[] = []): Promise<void> {
  await build({
    stdin: { contents, resolveDir: ROOT, sourcefile },
    bundle: true,
    platform: 'node',
    format: 'esm',
    conditions: ['edgeserve-source'],
    outfile,
    plugins,
    logLevel: 'error',
  })
}
