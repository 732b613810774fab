/** The model examples served by the demo Worker in workerd: answers equal a direct session.run. */
import { afterAll, beforeAll } from 'vitest'
import { startWorker, type TestWorker } from '../support/workerd.js'
import { describeModelExamples } from '../support/model-suite.js'

let worker: TestWorker | undefined
let base = ''

beforeAll(async () => {
  worker = await startWorker(new URL('../../wrangler.toml', import.meta.url))
  base = worker.url
})
afterAll(async () => {
  await worker?.dispose()
})

describeModelExamples('workerd', () => base)
