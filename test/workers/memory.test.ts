/**
 * 128 MB per isolate: the largest example model (PP-OCRv4's recognizer,
 * 10.8 MB of weights) loaded and run in a Durable Object in real workerd,
 * and what it cost in memory.
 *
 * Measured as the workerd process's resident memory (VmRSS, /proc), before
 * the model loads and after it ran: local workerd enforces no memory limit
 * and reports no per-isolate heap to a test, so the process is the measure.
 * The Worker is the only one in that process. Growth is an upper bound on
 * what the isolate took (it includes workerd's own allocations); the
 * baseline already holds the bundle, so the weights (a Data module) and
 * onnxruntime-web's compiled WebAssembly count there, not in the growth.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startWorker, type TestWorker } from '../support/workerd.js'

let worker: TestWorker | undefined
let workerd = 0

/** The workerd processes this test process started (vitest runs each file in its own process), oldest first. */
function workerdChildren(): number[] {
  const found: { pid: number; started: number }[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      // comm is in parentheses and may hold spaces; after it: state, ppid, ... and the start time (field 22).
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (comm === 'workerd' && Number(fields[1]) === process.pid) found.push({ pid: Number(entry), started: Number(fields[19]) })
    } catch {
      // gone meanwhile
    }
  }
  return found.sort((a, b) => a.started - b.started || a.pid - b.pid).map((p) => p.pid)
}

/** VmRSS and VmHWM (peak) of `pid`, in MiB. */
function memoryMb(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)![1])
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 }
}

beforeAll(async () => {
  const before = new Set(workerdChildren())
  worker = await startWorker(new URL('./memory/wrangler.toml', import.meta.url))
  // wrangler runs two workerd processes: its proxy, started first, and the Worker's, which may come up only
  // as the first request arrives. The Worker's isolate is up (the bundle loaded) before the baseline; the
  // object and the model are not.
  expect((await fetch(`${worker.url}/-/routes`)).status).toBe(200)
  const started = workerdChildren().filter((pid) => !before.has(pid))
  expect(started, "wrangler's proxy and the Worker's workerd").toHaveLength(2)
  workerd = started[1]!
})
afterAll(async () => {
  await worker?.dispose()
})

describe.runIf(process.platform === 'linux')('Workers: the largest example model in 128 MB', () => {
  it('loads and runs PP-OCRv4 recognizer in a Durable Object, and reports workerd memory', { timeout: 120_000 }, async () => {
    const baseline = memoryMb(workerd)

    const one = await fetch(`${worker!.url}/recognize?lines=1`)
    expect(one.status, await one.clone().text()).toBe(200)
    const first = (await one.json()) as Answer
    expect(first.dims).toEqual([1, 40, 6625])
    const loaded = memoryMb(workerd)

    const eight = await fetch(`${worker!.url}/recognize?lines=8`)
    expect(eight.status).toBe(200)
    const second = (await eight.json()) as Answer
    expect(second.dims).toEqual([8, 40, 6625])
    const batched = memoryMb(workerd)

    const report = {
      weightsMb: first.weightsMb,
      ortWasmHeapMb: { oneLine: first.wasmHeapMb, eightLines: second.wasmHeapMb },
      measure: 'workerd process VmRSS / VmHWM (MiB), one Worker in the process',
      baseline: round(baseline),
      afterLoadAndOneLine: round(loaded),
      afterEightLines: round(batched),
      growthOneLine: +(loaded.rss - baseline.rss).toFixed(1),
      growthEightLines: +(batched.rss - baseline.rss).toFixed(1),
    }
    console.log('edgeserve memory:', JSON.stringify(report))
    // ORT's heap (weights, arena, a batch's activations) is the part that surely counts against the
    // isolate's 128 MB; the weights' bytes in the bundle count too.
    expect(second.wasmHeapMb! + second.weightsMb).toBeLessThan(128)
  })
})

interface Answer {
  dims: number[]
  wasmHeapMb: number | undefined
  weightsMb: number
}

const round = (m: { rss: number; peak: number }) => ({ rss: +m.rss.toFixed(1), peak: +m.peak.toFixed(1) })
