import { freePort } from './free-port.js'
import { startInGroup, type GroupChild } from './process-group.js'

export interface WranglerDev {
  url: string
  /** The process group wrangler and workerd run in (to read their memory, say). */
  pgid: number
  output(): string
  waitForOutput: GroupChild['waitForOutput']
  stop(): Promise<void>
}

/**
 * Wrangler's local observability (on by default from wrangler 4.164; the
 * pinned 4.86 has none and ignores this) writes a trace of every request into
 * a SQLite store on disk, with an fsync each time: it makes each request
 * through `wrangler dev` two to three times slower, and it is only there to
 * browse those traces in the local explorer. `npm run dev` turns it off the
 * same way.
 */
const WRANGLER_DEV_ENV = { X_LOCAL_OBSERVABILITY: 'false' }

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
