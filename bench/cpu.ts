/**
 * CPU time of the load generator (this process) and of a server's process
 * group, so every load row can say how much of the machine each side used:
 * the load generator shares the 2 cores with the server it measures.
 */
import { readdirSync, readFileSync } from 'node:fs'

const TICKS_PER_S = 100 // Linux's USER_HZ

/** CPU seconds of this process, every thread included. */
export function ownCpuS(): number {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1e6
}

/**
 * CPU seconds of every process in group `pgid` (a server started in its own
 * group: Node with its worker threads, or wrangler with workerd), from /proc;
 * null where there is no /proc.
 */
export function groupCpuS(pgid: number): number | null {
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return null
  }
  let ticks = 0
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      // The fields after the command name (which may hold spaces): state, ppid, pgrp, ... utime is the 12th, stime the 13th.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(fields[2]) === pgid) ticks += Number(fields[11]) + Number(fields[12])
    } catch {
      // the process ended while we looked
    }
  }
  return ticks / TICKS_PER_S
}
