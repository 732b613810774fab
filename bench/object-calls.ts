/**
 * Calls into a deployment's Durable Objects, and the items they carried, from
 * the Worker's `/-/metrics` (Prometheus text, gathered from every replica
 * object): the histogram `edgeserve_object_call_items`, one observation per
 * call of the requests and handle calls it carried. Pure functions: the load
 * row reads the text before and after each run (bench/http.ts).
 */

/** Calls and the items they carried, over a deployment's replicas. */
export interface ObjectCalls {
  calls: number
  items: number
}

const FAMILY = 'edgeserve_object_call_items'
/** A sample line: the series' name, its labels if any, its value (a timestamp may follow). */
const SAMPLE = /^([A-Za-z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/
/** One label in a sample's braces, its value escaped as the format escapes it. */
const LABEL = /([A-Za-z_]\w*)\s*=\s*"((?:[^"\\]|\\.)*)"/g

const unescape = (value: string) => value.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c))

function labelsOf(text: string | undefined): Record<string, string> {
  const labels: Record<string, string> = {}
  for (const [, name, value] of (text ?? '').matchAll(LABEL)) labels[name!] = unescape(value!)
  return labels
}

/**
 * `deployment`'s totals in a `/-/metrics` text, summed over its replicas:
 * the histogram's `_count` (calls) and `_sum` (items); zero where the
 * family is declared but has no series for it yet. Null where the text
 * has no such family (a build that does not count object calls).
 */
export function objectCallTotals(text: string, deployment: string): ObjectCalls | null {
  let found = false
  const totals = { calls: 0, items: 0 }
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    if (/^#\s*TYPE\s+(\S+)/.exec(line)?.[1] === FAMILY) found = true
    const match = SAMPLE.exec(line)
    if (!match) continue
    const [, name, labels, value] = match
    const field = name === `${FAMILY}_count` ? 'calls' : name === `${FAMILY}_sum` ? 'items' : undefined
    if (field === undefined || labelsOf(labels).deployment !== deployment) continue
    found = true
    totals[field] += Number(value)
  }
  return found ? totals : null
}

/** What was added between two totals of one server; null where either is missing. */
export function objectCallsBetween(before: ObjectCalls | null, after: ObjectCalls | null): ObjectCalls | null {
  return before && after ? { calls: after.calls - before.calls, items: after.items - before.items } : null
}

/** Several runs' deltas together; null where any run's is missing. */
export function addObjectCalls(runs: (ObjectCalls | null)[]): ObjectCalls | null {
  let total: ObjectCalls | null = { calls: 0, items: 0 }
  for (const run of runs) total = run && total && { calls: total.calls + run.calls, items: total.items + run.items }
  return total
}

/** Items per call; null where nothing was counted, or no call made. */
export const itemsPerCall = (calls: ObjectCalls | null | undefined): number | null => (calls && calls.calls > 0 ? calls.items / calls.calls : null)
