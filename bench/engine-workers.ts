/**
 * The engine timed in worker threads, one isolate each, from bundles that
 * may differ (./turn-budget.ts bundles it with several loop-turn budgets):
 * each bundle is a module instance of its own, with its own constants, and
 * each worker its own code, heap and timers, while the rounds still
 * alternate between workers so that the machine's slow minutes slow them
 * alike.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import type { Plugin } from 'esbuild'
import { bundleDriver } from './bundle-driver.js'

/**
 * What each worker runs: the engine named in its workerData, one timed run
 * of the engine bench's closed loop for each message, answered with its
 * nanoseconds. A bundle, since a worker thread does not inherit tsx's
 * loader.
 */
const DRIVER = `
import { parentPort, workerData } from 'node:worker_threads'
import { closedLoop, enginesAt } from './bench/engine-workload.ts'
const engine = enginesAt(workerData.maxBatchSize).find((e) => e.name === workerData.engine)
if (!engine) throw new Error('no engine named ' + JSON.stringify(workerData.engine))
parentPort.on('message', async () => {
  // Let the last run's timers fire and its promise jobs drain outside the timed region.
  await new Promise((resolve) => setTimeout(resolve, 20))
  parentPort.postMessage(await closedLoop(engine.make()))
})
`

export class EngineWorkers {
  private readonly dir = mkdtempSync(join(tmpdir(), 'engine-workers-'))
  private bundles = 0

  /** A worker running `engine` at `maxBatchSize`, from the engine bundled with `plugins`. */
  async start(engine: string, maxBatchSize: number, plugins: Plugin[] = []): Promise<EngineWorker> {
    const outfile = join(this.dir, `driver-${this.bundles++}.mjs`)
    await bundleDriver(DRIVER, 'engine-worker-driver.mjs', outfile, plugins)
    return new EngineWorker(new Worker(outfile, { workerData: { engine, maxBatchSize } }))
  }

  /** Remove the bundles; the workers must have been stopped. */
  dispose(): void {
    rmSync(this.dir, { recursive: true, force: true })
  }
}

export class EngineWorker {
  constructor(private readonly worker: Worker) {}

  /** One timed run of the closed loop; its nanoseconds. */
  run(): Promise<number> {
    return new Promise((resolve, reject) => {
      const fail = (error: Error) => reject(error)
      this.worker.once('error', fail)
      this.worker.once('message', (ns: number) => {
        this.worker.off('error', fail)
        resolve(ns)
      })
      this.worker.postMessage('run')
    })
  }

  stop(): Promise<number> {
    return this.worker.terminate()
  }
}
