/** Small helpers shared by the bench scripts. */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('..', import.meta.url))
export const TSX = fileURLToPath(new URL('../node_modules/tsx/dist/cli.mjs', import.meta.url))
/** The bench app under wrangler dev, on a free loopback port, and the line that says where it listens. */
export const WRANGLER_DEV = [
  process.execPath,
  'node_modules/wrangler/bin/wrangler.js',
  'dev',
  '-c',
  'bench/wrangler.toml',
  '--ip',
  '127.0.0.1',
  '--port',
  '0',
  '--inspector-port',
  '0',
]
export const WRANGLER_READY = /Ready on (http:\/\/[\d.]+:\d+)/

export const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

/** The item whose `value` is nearest the median of all: with an even count, none is the median itself. */
export function nearestMedian<T>(items: readonly T[], value: (item: T) => number): T {
  const middle = median(items.map(value))
  return items.reduce((a, b) => (Math.abs(value(b) - middle) < Math.abs(value(a) - middle) ? b : a))
}

/**
 * The ratio of two rows measured round-robin: each round's ratio, then their
 * median. The two ran seconds apart in a round, so a slow stretch of the
 * machine slows both and cancels out, where a ratio of the two rows' medians
 * can take them from different rounds.
 */
export const roundByRound = (numerator: readonly number[], denominator: readonly number[]): number =>
  median(numerator.map((value, round) => value / denominator[round]!))

/**
 * What one row adds to another measured round-robin, such as a p50 in ms: each round's difference,
 * then their median, for the reason roundByRound takes each round's ratio. Null without a round, or
 * where the two rows have not as many rounds.
 */
export const differenceRoundByRound = (row: readonly number[], baseline: readonly number[]): number | null =>
  row.length === 0 || row.length !== baseline.length ? null : median(row.map((value, round) => value - baseline[round]!))

/** Nearest-rank percentile of unsorted samples. */
export const percentile = (xs: readonly number[], p: number): number => {
  if (xs.length === 0) return NaN
  const s = Float64Array.from(xs).sort()
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!
}

export const quick = process.argv.includes('--quick')

export function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name)
  return i >= 0 ? process.argv[i + 1] : undefined
}

/** Run a tsx script to completion; its last stdout line is JSON. `nodeFlags` go to node itself (V8 flags, for instance). */
export async function runJsonChild<R>(script: string, args: string[], env: Record<string, string> = {}, nodeFlags: string[] = []): Promise<R> {
  const child = spawn(process.execPath, [...nodeFlags, TSX, script, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  if (code !== 0) throw new Error(`${script} ${args.join(' ')} exited with ${code}:\n${out}`)
  const last = out.trim().split('\n').pop()!
  return JSON.parse(last) as R
}

/** Start a long-running child in its own process group; resolves once `ready` matches its output. */
export { startInGroup as startChild } from '../test/support/process-group.js'
