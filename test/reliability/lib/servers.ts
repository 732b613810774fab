/** Servers the suite starts: `edgeserve run` as a child process, `wrangler dev`, workerd via unstable_startWorker. */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { spawnServer, ROOT, type SpawnedServer } from '../../helpers/spawn-server.js'
import { freePort } from '../../helpers/free-port.js'
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

export interface WranglerDev {
  url: string
  /** The process group wrangler and workerd run in. */
  pgid: number
  output(): string
  stop(): Promise<void>
}

/** `wrangler dev` on a loopback port in its own process group (as test/helpers/wrangler-dev.ts, with the group exposed). */
export async function startWranglerDev(): Promise<WranglerDev> {
  const port = await freePort()
  const child = spawn(
    process.execPath,
    ['node_modules/wrangler/bin/wrangler.js', 'dev', '--ip', '127.0.0.1', '--port', String(port), '--inspector-port', '0'],
    { cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false', NO_COLOR: '1' } },
  )
  let output = ''
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const stop = async () => {
    try {
      process.kill(-child.pid!, 'SIGTERM')
    } catch {
      // already gone
    }
    await Promise.race([exited, sleep(5000)])
    try {
      process.kill(-child.pid!, 'SIGKILL')
    } catch {
      // already gone
    }
  }
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop()
      reject(new Error(`wrangler dev did not become ready in 60 s:\n${output}`))
    }, 60_000)
    const check = () => {
      if (output.includes('Ready on')) {
        clearTimeout(timer)
        resolve()
      }
    }
    child.stdout!.on('data', check)
    child.stderr!.on('data', check)
    void exited.then(() => {
      clearTimeout(timer)
      reject(new Error(`wrangler dev exited before it was ready:\n${output}`))
    })
  })
  return { url: `http://127.0.0.1:${port}`, pgid: child.pid!, output: () => output, stop }
}
