/**
 * What a pending call holds in memory, engine by engine, and what share of
 * the engine bench's burst workload the collector takes:
 *
 *   npx tsx bench/engine-memory.ts
 *
 * Not part of `npm run bench`. Each engine of ./engine-workload.ts runs in a
 * fresh process: three warm-up bursts, then 64,000 calls
 * left pending with heap use read after a full collection before and after
 * (the bytes a queued call keeps alive: its engine's objects, its promise
 * and resolving functions, and the 8-byte slot of the array that holds the
 * promise here), then twenty timed bursts with V8's collections summed from
 * `perf_hooks`. In the burst every call waits in the queue until its batch
 * runs, so the collector copies what a pending call holds from one young
 * space to the other, and promotes it: bytes per call there cost time, not
 * just memory. Prints a table and, last, one line of JSON.
 */
import { PerformanceObserver } from 'node:perf_hooks'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { enginesAt } from './engine-workload.js'
import { argValue, runJsonChild } from './lib.js'

const CALLS = 64_000
const MAX_BATCH_SIZE = 64

interface Row {
  engine: string
  bytesPerPendingCall: number
  burstNsPerCall: number
  /** Share of the timed bursts' wall time spent in V8's collections. */
  collectorShare: number
}

async function measure(name: string): Promise<Row> {
  const engine = enginesAt(MAX_BATCH_SIZE).find((e) => e.name === name)
  if (!engine) throw new Error(`no engine named ${JSON.stringify(name)}`)
  // The flag set at run time exposes gc() to contexts made after it.
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as () => void
  const burst = (call: (i: number) => Promise<unknown>) => Promise.all(Array.from({ length: CALLS }, (_, i) => call(i)))

  for (let i = 0; i < 3; i++) await burst(engine.make())
  const call = engine.make()
  gc()
  const before = process.memoryUsage().heapUsed
  const pending: Promise<unknown>[] = new Array(CALLS)
  for (let i = 0; i < CALLS; i++) pending[i] = call(i)
  gc()
  const held = process.memoryUsage().heapUsed - before
  await Promise.all(pending)

  let collectorMs = 0
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) collectorMs += entry.duration
  })
  observer.observe({ entryTypes: ['gc'] })
  let totalMs = 0
  for (let i = 0; i < 20; i++) {
    const t0 = performance.now()
    await burst(engine.make())
    totalMs += performance.now() - t0
    // Let the observer's entries arrive, outside the timed region.
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  observer.disconnect()
  return { engine: name, bytesPerPendingCall: held / CALLS, burstNsPerCall: (totalMs * 1e6) / (20 * CALLS), collectorShare: collectorMs / totalMs }
}

const only = argValue('--engine')
if (only !== undefined) {
  console.log(JSON.stringify(await measure(only)))
} else {
  const rows: Row[] = []
  for (const { name } of enginesAt(MAX_BATCH_SIZE)) {
    rows.push(await runJsonChild<Row>('bench/engine-memory.ts', ['--engine', name]))
  }
  console.log('| engine | bytes a pending call holds | burst, ns a call | collector, share of the burst |')
  console.log('| --- | ---: | ---: | ---: |')
  for (const r of rows) {
    console.log(`| ${r.engine} | ${r.bytesPerPendingCall.toFixed(0)} | ${r.burstNsPerCall.toFixed(0)} | ${(r.collectorShare * 100).toFixed(0)}% |`)
  }
  console.log(JSON.stringify(rows))
}
