/**
 * Which of edgeserve's files and functions one batched request runs through
 * on Node: `serve()` with a batched `/adder` route, warmed up, then V8's
 * precise coverage (call counts) taken just before and just after one
 * request over HTTP, the fewest of five. Prints one JSON line: the counts
 * and the list. test/node/request-path.test.ts holds it to its bounds.
 */
import { Session } from 'node:inspector/promises'
import { fileURLToPath } from 'node:url'
import { Hono } from 'hono'
import { batch, deployment, ingress } from '../src/index.js'
import { serve } from '../src/runtime/node/index.js'

const SRC = new URL('../src/', import.meta.url).href

class Adder {
  add = batch(async (numbers: number[]) => numbers.map((n) => n + 1), { maxBatchSize: 4 })
  async fetch(request: Request): Promise<string> {
    return String(await this.add(Number(new URL(request.url).searchParams.get('number'))))
  }
}
const app = new Hono().get('/adder', ingress(deployment(Adder)))

const session = new Session()
session.connect()
await session.post('Profiler.enable')
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: true })

const server = await serve(app, { port: 0, handleSignals: false, logLevel: 'error', dashboard: false })
const url = `http://127.0.0.1:${server.port}/adder?number=41`
const settle = () => new Promise((resolve) => setTimeout(resolve, 20))
async function once(): Promise<void> {
  const response = await fetch(url)
  const text = await response.text()
  if (response.status !== 200 || text !== '42') throw new Error(`/adder answered ${response.status}: ${text}`)
}
for (let i = 0; i < 200; i++) await once()

/** The files and functions of ours that ran between two takes of the coverage around one request. */
async function pathOfOne(): Promise<Record<string, string[]>> {
  await settle()
  await session.post('Profiler.takePreciseCoverage') // resets the counts
  await once()
  await settle()
  const { result } = await session.post('Profiler.takePreciseCoverage')
  const files: Record<string, string[]> = {}
  for (const script of result) {
    if (!script.url.startsWith(SRC)) continue
    // Every function called at least once, but not the module's own top level (it ran at import).
    const called = script.functions.filter((fn) => fn.ranges[0]!.count > 0 && fn.ranges[0]!.startOffset > 0)
    if (called.length === 0) continue
    const path = fileURLToPath(script.url).slice(fileURLToPath(SRC).length)
    files[path] = called.map((fn) => fn.functionName || '(anonymous)')
  }
  return files
}
const count = (files: Record<string, string[]>) => Object.values(files).reduce((sum, names) => sum + names.length, 0)

// The fewest of five requests: what else the event loop ran in a window (the turns owed after a
// turn that a collection or a busy machine stretched past the budget, see src/batching/scheduler.ts) is not the path.
let files = await pathOfOne()
for (let i = 1; i < 5; i++) {
  const next = await pathOfOne()
  if (count(next) < count(files)) files = next
}
await session.post('Profiler.stopPreciseCoverage')
await server.close()

const functions = count(files)
console.log(JSON.stringify({ files: Object.keys(files).length, functions, path: files }))
