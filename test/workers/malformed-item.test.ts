/**
 * A malformed item fails alone, by default (issue #40), in real workerd:
 * each predictor a Durable Object, the same burst as on Node
 * (test/support/malformed-item-suite.ts).
 */
import { afterAll, beforeAll } from 'vitest'
import { startWorker, type TestWorker } from '../support/workerd.js'
import { describeMalformedItem } from '../support/malformed-item-suite.js'

let worker: TestWorker | undefined
let base = ''

beforeAll(async () => {
  worker = await startWorker(new URL('./wrangler.toml', import.meta.url))
  base = worker.url
})
afterAll(async () => {
  await worker?.dispose()
})

describeMalformedItem('workerd', () => base)
