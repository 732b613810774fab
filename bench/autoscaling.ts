/**
 * A step load against the autoscaled adder (`examples/autoscaling`: batches of
 * 4, 50 ms of work per batch, 0 to 4 replicas, target 4 ongoing per replica,
 * up after 1 s, down after 10 s): idle, then 64 closed-loop connections, then
 * idle again, while /-/routes is polled for the replica count (every 250 ms). The same load
 * runs against the same deployment at a fixed 4 replicas (its maximum).
 *
 *   npx tsx --conditions=edgeserve-source bench/autoscaling.ts [--load-s 10] [--idle-s 16]
 *
 * The server runs in its own process; this one is the load generator. Prints
 * a markdown table, then one JSON line. Run alone, it also merges its section
 * into bench/results/latest.json and regenerates docs/benchmarks.md.
 */
import { argValue, median, percentile, startChild, TSX } from './lib.js'
import { mergeIntoResults } from './merge-results.js'

const CONNECTIONS = 64
const leadS = 2
const loadS = Number(argValue('--load-s') ?? 10)
// Long enough to see the count fall: the look-back window empties (3 s), then the 10 s downscale delay.
const idleS = Number(argValue('--idle-s') ?? 16)
/** The ramp: the first seconds of load, while an autoscaled deployment is still growing. */
const rampS = 3

export interface Sample {
  t: number
  replicas: number
}

export interface Run {
  mode: string
  requests: number
  errors: number
  p50Ms: number
  p99Ms: number
  p99RampMs: number
  p99SteadyMs: number
  requestsPerS: number
  maxReplicas: number
  /** Seconds from the load's start until the count reached its maximum; null if it never did. */
  secondsToMax: number | null
  /** Seconds from the load's end until the count was back at its minimum; null if it was not within the idle phase. */
  secondsToMin: number | null
  timeline: Sample[]
}

async function measure(mode: string, args: string[]): Promise<Run> {
  const child = await startChild(
    [process.execPath, TSX, 'bench/autoscaling-server.ts', ...args],
    /READY (http:\/\/\S+)/,
    { NODE_OPTIONS: '--conditions=edgeserve-source' },
    60_000,
  )
  const base = child.match[1]!
  try {
    const t0 = performance.now()
    const now = () => (performance.now() - t0) / 1000
    const timeline: Sample[] = []
    let polling = true
    const poller = (async () => {
      while (polling) {
        const body = (await (await fetch(`${base}/-/routes`)).json()) as { deployments: { name: string; replicas: number }[] }
        timeline.push({ t: +now().toFixed(2), replicas: body.deployments.find((d) => d.name === 'ScaledAdder')!.replicas })
        await new Promise((resolve) => setTimeout(resolve, 250))
      }
    })()
    await new Promise((resolve) => setTimeout(resolve, leadS * 1000))
    const latencies: { at: number; ms: number }[] = []
    let errors = 0
    let n = 0
    const loadEnd = leadS + loadS
    const client = async () => {
      while (now() < loadEnd) {
        const started = performance.now()
        const response = await fetch(`${base}/adder?number=${n++ % 1000}`)
        const text = await response.text()
        if (response.status !== 200 || !/^\d+$/.test(text)) errors++
        latencies.push({ at: (started - t0) / 1000, ms: performance.now() - started })
      }
    }
    await Promise.all(Array.from({ length: CONNECTIONS }, client))
    const loadEndedAt = now()
    await new Promise((resolve) => setTimeout(resolve, idleS * 1000))
    polling = false
    await poller

    const all = latencies.map((l) => l.ms)
    const ramp = latencies.filter((l) => l.at < leadS + rampS).map((l) => l.ms)
    const steady = latencies.filter((l) => l.at >= loadEnd - rampS).map((l) => l.ms)
    const max = Math.max(...timeline.map((s) => s.replicas))
    const min = Math.min(...timeline.map((s) => s.replicas))
    // A fixed count never moves: no time to reach anything.
    const reachedMax = min === max ? undefined : timeline.find((s) => s.t >= leadS && s.replicas === max)
    const backToMin = min === max ? undefined : timeline.find((s) => s.t >= loadEndedAt && s.replicas === min)
    return {
      mode,
      requests: latencies.length,
      errors,
      p50Ms: median(all),
      p99Ms: percentile(all, 99),
      p99RampMs: percentile(ramp, 99),
      p99SteadyMs: percentile(steady, 99),
      requestsPerS: latencies.length / loadS,
      maxReplicas: max,
      secondsToMax: reachedMax ? +(reachedMax.t - leadS).toFixed(2) : null,
      secondsToMin: backToMin ? +(backToMin.t - loadEndedAt).toFixed(2) : null,
      timeline,
    }
  } finally {
    await child.stop()
  }
}

const runs = [await measure('autoscaled 0-4', []), await measure('fixed 4', ['--fixed', '4'])]
const f = (x: number | null, d = 0) => (x === null || Number.isNaN(x) ? '–' : x.toFixed(d))
console.error('| replicas | requests | req/s | errors | p50 ms | p99 ms | p99 first 3 s ms | p99 last 3 s ms | most replicas | s to most | s back to fewest |')
for (const r of runs) {
  console.error(
    `| ${r.mode} | ${r.requests} | ${f(r.requestsPerS)} | ${r.errors} | ${f(r.p50Ms)} | ${f(r.p99Ms)} | ${f(r.p99RampMs)} | ${f(r.p99SteadyMs)} | ${r.maxReplicas} | ${f(r.secondsToMax, 1)} | ${f(r.secondsToMin, 1)} |`,
  )
}
const section = { date: new Date().toISOString(), connections: CONNECTIONS, leadS, loadS, idleS, rampS, runs }
if (!process.argv.includes('--print-only')) mergeIntoResults('autoscaling', section)
console.log(JSON.stringify(section))
