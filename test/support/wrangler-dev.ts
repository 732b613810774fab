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

/** `wrangler dev` on a loopback port, as `npm run dev` runs it. */
export async function startWranglerDev(args: string[] = []): Promise<WranglerDev> {
  const port = await freePort()
  const dev = await startInGroup(
    [process.execPath, 'node_modules/wrangler/bin/wrangler.js', 'dev', '--ip', '127.0.0.1', '--port', String(port), '--inspector-port', '0', ...args],
    /Ready on/,
  )
  return { url: `http://127.0.0.1:${port}`, pgid: dev.child.pid!, output: dev.output, waitForOutput: dev.waitForOutput, stop: dev.stop }
}
