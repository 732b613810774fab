import { afterAll, beforeAll } from 'vitest'
import { unstable_startWorker } from 'wrangler'

export interface TestWorker {
  /** The Worker's origin, without a trailing slash. */
  url: string
  dispose(): Promise<void>
}

/**
 * Run a wrangler config in real workerd on an ephemeral loopback port, the
 * way `wrangler dev` does, without a child process to clean up.
 */
export async function startWorker(config: URL): Promise<TestWorker> {
  // WORKERD_LOG=log shows the Worker's request log and console while debugging.
  const worker = await unstable_startWorker({
    config: config.pathname,
    // No persisted storage: each run starts from fresh objects (an autoscaler's stored count, say), not the last run's.
    dev: {
      server: { hostname: '127.0.0.1', port: 0 },
      inspector: false,
      watch: false,
      persist: false,
      logLevel: (process.env.WORKERD_LOG ?? 'none') as 'none',
    },
  })
  await worker.ready
  return { url: (await worker.url).href.replace(/\/$/, ''), dispose: () => worker.dispose() }
}

/**
 * The Worker of `config`, started before a test file's tests and disposed
 * after them; `url` is its origin once started.
 */
export function workerForTests(config: URL): { readonly url: string } {
  let worker: TestWorker | undefined
  beforeAll(async () => {
    worker = await startWorker(config)
  })
  afterAll(async () => {
    await worker?.dispose()
  })
  return {
    get url() {
      if (worker === undefined) throw new Error('the test Worker has not started')
      return worker.url
    },
  }
}
