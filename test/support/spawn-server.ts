import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))

export interface SpawnedServer {
  url: string
  child: ChildProcess
  output(): string
  /** Resolves with the exit code. */
  exited: Promise<number | null>
  stop(): Promise<number | null>
}

/**
 * Start `edgeserve run ...` (or any command that prints "listening on <url>")
 * on an ephemeral loopback port and wait until it listens.
 */
export async function spawnServer(
  args: string[],
  options: {
    env?: Record<string, string>
    command?: string
    /**
     * Run it in a process group of its own and stop the whole group: for a
     * command that starts the server in a grandchild and does not pass
     * SIGTERM on (`npm start`; a terminal's Ctrl-C reaches the whole group).
     */
    group?: boolean
  } = {},
): Promise<SpawnedServer> {
  const child = spawn(options.command ?? process.execPath, options.command ? args : ['bin/edgeserve.js', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.group === true,
  })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
  // 'close', not 'exit': the exit can be reported before the last of the output is read from the pipes.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)))
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start within 20 s:\n${output}`)), 20_000)
    const check = () => {
      const match = /listening on (http:\/\/[^\s]+)/.exec(output)
      if (match) {
        clearTimeout(timer)
        resolve(match[1]!)
      }
    }
    child.stdout.on('data', check)
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`server exited with ${code} before listening:\n${output}`))
    })
  })
  return {
    url,
    child,
    output: () => output,
    exited,
    stop: async () => {
      if (options.group) killGroup(child.pid!)
      else if (child.exitCode === null) child.kill('SIGTERM')
      return exited
    },
  }
}

/** SIGTERM to every process of a group; a group that has already gone is not an error. */
function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGTERM')
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ESRCH') throw error
  }
}
