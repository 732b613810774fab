import { freePort } from './free-port.js'
import { startInGroup, type GroupChild } from './process-group.js'

export interface WranglerDev {
  url: string
  /** The process group wrangler and workerd run in (to read their memory, say). */
  pgid: number
  output: GroupChild['output']
  waitForOutput: GroupChild['waitForOutput']
  stop: GroupChild['stop']
}

/**
 * Wrangler's local observability (on by default from wrangler 4.164) writes a
 * trace of every request into a SQLite store on disk, with an fsync each time:
 * it makes each request through `wrangler dev` two to three times slower, and
 * it is only there to browse those traces in the local explorer.
 *
 * The V8 in workerd 1.20261117 starts each isolate's old generation so large
 * that no major GC runs in 5,000 requests, and the native memory dead requests
 * hold stays until one does (workerd's RSS grew 560 MB, against 390 MB on
 * workerd 1.20260426); at 8 MB, V8 collects as often as the older one did.
 * Live objects survive either way. `npm run dev` and the bench set both the same way.
 */
const WRANGLER_DEV_ENV = { X_LOCAL_OBSERVABILITY: 'false', MINIFLARE_WORKERD_V8_FLAGS: '--initial-old-space-size=8' }

/** `wrangler dev` on a loopback port, as `npm run dev` runs it. */
export async function startWranglerDev(args: string[] = []): Promise<WranglerDev> {
  const port = await freePort()
  const dev = await startInGroup(
    [process.execPath, 'node_modules/wrangler/bin/wrangler.js', 'dev', '--ip', '127.0.0.1', '--port', String(port), '--inspector-port', '0', ...args],
    /Ready on/,
    WRANGLER_DEV_ENV,
  )
  return { url: `http://127.0.0.1:${port}`, pgid: dev.child.pid!, output: dev.output, waitForOutput: dev.waitForOutput, stop: dev.stop }
}
