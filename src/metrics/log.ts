/**
 * Structured logs: one JSON line per event, filtered by level. The level
 * comes from `setLogLevel()` (serve's `logLevel` option) or, on Node, the
 * EDGESERVE_LOG_LEVEL environment variable; the default, 'info', keeps the
 * per-batch lines (level 'debug') out of production logs.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent'

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 }

function initialLevel(): LogLevel {
  const fromEnv = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.EDGESERVE_LOG_LEVEL
  return fromEnv && fromEnv in ORDER ? (fromEnv as LogLevel) : 'info'
}

let level = initialLevel()
let threshold = ORDER[level]

/** Whether debug lines are written: a caller that would build a line per batch checks this first. */
export let debugLogged = threshold <= ORDER.debug

/** The level in force: a replica thread starts with its server's. */
export function currentLogLevel(): LogLevel {
  return level
}

export function setLogLevel(to: LogLevel): void {
  if (!(to in ORDER)) {
    throw new TypeError(`log level must be one of ${Object.keys(ORDER).join(', ')}, received ${JSON.stringify(to)}`)
  }
  level = to
  threshold = ORDER[level]
  debugLogged = threshold <= ORDER.debug
}

function write(level: LogLevel, event: string, fields: Record<string, unknown>): void {
  if (ORDER[level] < threshold) return
  const line = JSON.stringify({ time: new Date().toISOString(), level, event, ...fields })
  if (level === 'error' || level === 'warn') console.error(line)
  else console.log(line)
}

export const log = {
  /** One line per batch and the like: off unless the level is 'debug'. */
  debug: (event: string, fields: Record<string, unknown>) => write('debug', event, fields),
  /** What a reader of the server's log wants to know once: a model loaded, on which provider and threads. */
  info: (event: string, fields: Record<string, unknown>) => write('info', event, fields),
  /** Something went wrong that no request answer can carry: a replica's dispose() threw, a replica failed to start. */
  warn: (event: string, fields: Record<string, unknown>) => write('warn', event, fields),
}
