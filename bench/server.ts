/**
 * The bench's Node server: `tsx bench/server.ts [--threads]`. Prints
 * `READY <url>` once listening. Runs in its own process, apart from the load
 * generator.
 */
import { serve } from '../src/runtime/node/index.js'
import { app } from './apps/app.js'

const threads = process.argv.includes('--threads')
/** Which deployments `--threads` moves to worker threads: the OCR classifier, unless BENCH_THREAD_DEPLOYMENTS names others. */
const onThreads = (process.env.BENCH_THREAD_DEPLOYMENTS ?? 'TextDirectionClassifier').split(',')
const server = await serve(app, {
  port: 0,
  name: 'bench',
  ...(threads ? { threads: { module: new URL('./apps/app.ts', import.meta.url), deployments: onThreads } } : {}),
})
console.log(`READY ${server.url}`)
