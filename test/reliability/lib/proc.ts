/** The server side as the suite sees it: RSS from /proc, and the batch gauges from /-/metrics. */
import { readdirSync, readFileSync } from 'node:fs'
import { request } from './http.js'

/** Resident set size of a process, in MB (Linux /proc). */
export function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = Number(/VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1])
  return Math.round((kb / 1024) * 10) / 10
}

/** Pids of the processes in a process group whose command is `name` (workerd under wrangler dev). */
export function pidsInGroup(pgid: number, name: string): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const close = stat.lastIndexOf(')')
      const comm = stat.slice(stat.indexOf('(') + 1, close)
      const fields = stat.slice(close + 2).split(' ')
      if (Number(fields[2]) === pgid && comm === name) found.push(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return found
}

/** Sum of each gauge's samples in the Prometheus text of /-/metrics (those whose labels contain `labels`). */
export async function gauges(base: string, names: string[], labels = ''): Promise<Record<string, number>> {
  const text = (await request(base, { path: '/-/metrics', timeoutMs: 10_000 })).text
  const totals: Record<string, number> = Object.fromEntries(names.map((n) => [n, 0]))
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)(\{[^}]*\})? (\S+)$/.exec(line)
    if (match && match[1]! in totals && (match[2] ?? '').includes(labels)) totals[match[1]!]! += Number(match[3])
  }
  return totals
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
