/** The model examples served by the demo Worker in workerd: answers equal a direct session.run. */
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll } from 'vitest'
import { unstable_startWorker } from 'wrangler'
import { describeModelExamples } from '../helpers/model-suite.js'

let worker: Awaited<ReturnType<typeof unstable_startWorker>>
let base = ''

beforeAll(async () => {
  worker = await unstable_startWorker({
    config: fileURLToPath(new URL('../../wrangler.toml', import.meta.url)),
    dev: { server: { hostname: '127.0.0.1', port: 0 }, inspector: false, watch: false, logLevel: 'none' },
  })
  await worker.ready
  base = (await worker.url).href.replace(/\/$/, '')
})
afterAll(async () => {
  await worker?.dispose()
})

describeModelExamples('workerd', () => base, { earlyAnswerLosesBody: true })
