import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

export interface GroupChild {
  child: ChildProcess
  /** What `ready` matched in the child's output. */
  match: RegExpMatchArray
  output: () => string
  /**
   * Resolves once `pattern` matches the output. What a child logs reaches this
   * process through a pipe (and, for wrangler, through workerd's pipe to
   * wrangler first), so a log line written while a request ran can arrive
   * after that request's answer: a test that reads logs waits for them.
   */
  waitForOutput: (until: RegExp | ((output: string) => boolean), timeoutMs?: number) => Promise<string>
  /** SIGTERM to the whole group, SIGKILL after 5 s. */
  stop: () => Promise<void>
}

/**
 * Start a long-running child (a server, wrangler dev) in its own process
 * group, from the repository root, and resolve once `ready` matches its
 * output. Stopping signals the whole group: wrangler leaves workerd running
 * if only its own process is killed.
 */
export async function startInGroup(
  argv: string[],
  ready: RegExp,
  env: Record<string, string> = {},
  timeoutMs = 60_000,
  /** Another directory than the repository, and the environment to start from instead of this process's. */
  where: { cwd?: string; baseEnv?: NodeJS.ProcessEnv } = {},
): Promise<GroupChild> {
  const child = spawn(argv[0]!, argv.slice(1), {
    cwd: where.cwd ?? ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...(where.baseEnv ?? process.env), WRANGLER_SEND_METRICS: 'false', CLOUDFLARE_CF_FETCH_ENABLED: 'false', NO_COLOR: '1', ...env },
  })
  let output = ''
  const waiters = new Set<() => void>()
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, name)
    } catch {
      // already gone
    }
  }
  const stop = async () => {
    signal('SIGTERM')
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))])
    signal('SIGKILL')
  }
  const match = await new Promise<RegExpMatchArray>((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop()
      reject(new Error(`${argv.join(' ')} not ready in ${timeoutMs} ms:\n${output}`))
    }, timeoutMs)
    const check = (chunk: Buffer) => {
      output += chunk.toString()
      for (const wake of waiters) wake()
      const found = output.match(ready)
      if (found) {
        clearTimeout(timer)
        resolve(found)
      }
    }
    child.stdout.on('data', check)
    child.stderr.on('data', check)
    void exited.then(() => {
      clearTimeout(timer)
      reject(new Error(`${argv.join(' ')} exited before it was ready:\n${output}`))
    })
  })
  const waitForOutput = (until: RegExp | ((output: string) => boolean), waitMs = 10_000) =>
    new Promise<string>((resolve, reject) => {
      const met = typeof until === 'function' ? until : (text: string) => until.test(text)
      const wake = () => {
        if (!met(output)) return
        waiters.delete(wake)
        clearTimeout(timer)
        resolve(output)
      }
      const timer = setTimeout(() => {
        waiters.delete(wake)
        reject(new Error(`${String(until)} not met in ${waitMs} ms of output:\n${output}`))
      }, waitMs)
      waiters.add(wake)
      wake()
    })
  return { child, match, output: () => output, waitForOutput, stop }
}
