import { Worker, type WorkerOptions } from 'node:worker_threads'

/**
 * Start a worker thread, leaving out of its `execArgv` the flags Node
 * refuses in a worker.
 *
 * A worker given no execArgv inherits the process's flags, and Node drops
 * those that only a process can have by itself. Given a list, it refuses the
 * whole worker if one of them is a V8 option (`--max-old-space-size`,
 * `--trace-gc`) or a per-process one (`--title`): a server started with
 * `node --max-old-space-size=4096` would fail to start its replicas. So a
 * refused start is tried once more without the flags Node named.
 */
export function startWorker(file: string, options: WorkerOptions): Worker {
  try {
    return new Worker(file, options)
  } catch (error) {
    const refused = refusedFlags(error)
    if (refused === undefined || options.execArgv === undefined) throw error
    return new Worker(file, { ...options, execArgv: options.execArgv.filter((flag) => !refused.has(flag)) })
  }
}

/** The flags named by Node's ERR_WORKER_INVALID_EXEC_ARGV ("...invalid execArgv flags: --a, --b"), else undefined. */
function refusedFlags(error: unknown): Set<string> | undefined {
  const { code, message } = error as { code?: unknown; message?: unknown }
  if (code !== 'ERR_WORKER_INVALID_EXEC_ARGV' || typeof message !== 'string') return undefined
  const list = /flags: (.+)$/.exec(message)?.[1]
  return list === undefined ? undefined : new Set(list.split(', '))
}
