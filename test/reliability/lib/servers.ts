/** Servers the suite starts: `edgeserve run` as a child process, `wrangler dev`, workerd via unstable_startWorker. */
import { fileURLToPath } from 'node:url'
import { spawnServer, type SpawnedServer } from '../../support/spawn-server.js'
import { sleep } from './proc.js'

const GC_HOOK = fileURLToPath(new URL('../fixtures/gc-hook.mjs', import.meta.url))

export interface NodeServer extends SpawnedServer {
  pid: number
  /** Full GC in the server, then its memory as it reports it. */
  gc(): Promise<{ rssMb: number; heapUsedMb: number; externalMb: number }>
}

/** `node bin/edgeserve.js run <target> --port 0 ...`, with the GC hook preloaded. */
export async function startNode(args: string[], env: Record<string, string> = {}): Promise<NodeServer> {
  const server = await spawnServer(['--expose-gc', '--import', GC_HOOK, 'bin/edgeserve.js', 'run', ...args, '--port', '0'], {
    command: process.execPath,
    env,
  })
  const pid = server.child.pid!
  return Object.assign(server, {
    pid,
    async gc() {
      const before = server.output().length
      server.child.kill('SIGUSR2')
      for (let i = 0; i < 100; i++) {
        const match = /edgeserve-gc: (\{.*\})/.exec(server.output().slice(before))
        if (match) return JSON.parse(match[1]!) as { rssMb: number; heapUsedMb: number; externalMb: number }
        await sleep(20)
      }
      throw new Error('the server did not answer SIGUSR2 with its memory')
    },
  })
}

export { startWranglerDev, type WranglerDev } from '../../support/wrangler-dev.js'
