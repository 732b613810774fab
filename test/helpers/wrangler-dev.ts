import { spawn } from 'node:child_process'
import { ROOT } from './spawn-server.js'
import { freePort } from './free-port.js'

export interface WranglerDev {
  url: string
  /** The process group wrangler and workerd run in (to read their memory, say). */
  pgid: number
  output(): string
  stop(): Promise<void>
}

/**
 * `wrangler dev` on a loopback port, as `npm run dev` runs it. Started in its
 * own process group: wrangler leaves workerd running if only npx is killed.
 */
export async function startWranglerDev(args: string[] = []): Promise<WranglerDev> {
  const port = await freePort()
  const child = spawn(
    process.execPath,
    ['node_modules/wrangler/bin/wrangler.js', 'dev', '--ip', '127.0.0.1', '--port', String(port), '--inspector-port', '0', ...args],
    {
      cwd: ROOT,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false', NO_COLOR: '1' },
    },
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
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))])
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
