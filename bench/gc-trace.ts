/**
 * What the garbage collector costs a served route, isolate by isolate: the
 * bench server (bench/server.ts) runs under `node --trace-gc`, one endpoint
 * is loaded from this process as a bench row is, and V8's lines for the
 * measured seconds are summed. How the house-price route's requests were
 * found to outlive minor GCs (bench/limits.md): a route whose minor GCs
 * each keep megabytes in the old generation holds objects it no longer
 * needs. Not part of `npm run bench`.
 *
 *   npx tsx bench/gc-trace.ts [--endpoint mlp-batched] [--connections 64] [--seconds 4] [--threads [Deployment,...]]
 *
 * The load generator runs here, on the same cores.
 */
import { loadSpec, prime, servedEndpointArgs } from './endpoints.js'
import { measure, warmUp } from './http.js'
import { startChild } from './lib.js'

const { endpoint, connections, seconds, threads, threadDeployments } = servedEndpointArgs({ endpoint: 'mlp-batched', seconds: 4 })

/** One `--trace-gc` line: `[pid:0xisolate]  1234 ms: Scavenge 29.2 (75.2) -> 20.7 (75.2) MB, 4.17 / 0.00 ms ...`. */
const LINE = /^\[\d+:(0x[0-9a-f]+)\]\s+[\d.]+ ms: (Scavenge|Mark-Compact|Minor Mark-Sweep)\b[^\d]*([\d.]+) \([\d.]+\) -> ([\d.]+) \([\d.]+\) MB, ([\d.]+) \//

interface IsolateGc {
  minor: number
  minorMs: number
  /** Heap growth over each minor GC (after it, against after the one before): what minor GCs kept. */
  keptMb: number
  full: number
  fullMs: number
  lastAfter: number | undefined
}

const server = await startChild(
  [process.execPath, '--conditions=edgeserve-source', '--import', 'tsx', '--trace-gc', 'bench/server.ts', ...(threads ? ['--threads'] : [])],
  /READY (http:\/\/\S+)/,
  threadDeployments === undefined ? {} : { BENCH_THREAD_DEPLOYMENTS: threadDeployments },
  90_000,
)
try {
  const base = server.match[1]!
  await prime(base, endpoint)
  const spec = loadSpec(endpoint, base, { target: threads ? 'node-threads' : 'node', connections, durationS: seconds, warmupS: 2 })
  await warmUp(spec)
  const from = server.output().length
  const row = await measure(spec)
  const isolates = new Map<string, IsolateGc>()
  for (const line of server.output().slice(from).split('\n')) {
    const m = LINE.exec(line)
    if (!m) continue
    const [, isolate, kind, , after, ms] = m
    const gc = isolates.get(isolate!) ?? { minor: 0, minorMs: 0, keptMb: 0, full: 0, fullMs: 0, lastAfter: undefined }
    isolates.set(isolate!, gc)
    if (kind === 'Mark-Compact') {
      gc.full++
      gc.fullMs += Number(ms)
    } else {
      gc.minor++
      gc.minorMs += Number(ms)
      if (gc.lastAfter !== undefined) gc.keptMb += Math.max(0, Number(after) - gc.lastAfter)
    }
    gc.lastAfter = Number(after)
  }
  const requests = row.requestsPerS * seconds
  console.log(`${endpoint.name} at c=${connections}, ${threads ? `${threadDeployments ?? 'TextDirectionClassifier'} on a thread replica` : 'in process'}: ${row.requestsPerS.toFixed(0)} req/s over ${seconds} s; load generator ${row.loadGeneratorCores.toFixed(2)} cores (same machine)\n`)
  console.log('| isolate | minor GCs | their ms | µs per request | MB kept per minor GC | full GCs | their ms |')
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |')
  for (const [isolate, gc] of isolates) {
    const keptPer = gc.minor > 1 ? gc.keptMb / (gc.minor - 1) : 0
    console.log(`| ${isolate} | ${gc.minor} | ${gc.minorMs.toFixed(0)} | ${((gc.minorMs / requests) * 1000).toFixed(2)} | ${keptPer.toFixed(2)} | ${gc.full} | ${gc.fullMs.toFixed(0)} |`)
  }
} finally {
  await server.stop()
}
