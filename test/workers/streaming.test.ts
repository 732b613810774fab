/** Streaming in workerd: SSE through Worker and Durable Object, and handle streams over RPC. */
import { afterAll, beforeAll } from 'vitest'
import { startWorker, type TestWorker } from '../support/workerd.js'
import { describeStreaming } from '../support/streaming-suite.js'

let worker: TestWorker | undefined
let base = ''

beforeAll(async () => {
  worker = await startWorker(new URL('./wrangler.toml', import.meta.url))
  base = worker.url
})
afterAll(async () => {
  await worker?.dispose()
})

describeStreaming('workerd', {
  baseUrl: () => base,
  async viaHandle(text, maxTokens, take) {
    const query = new URLSearchParams({ text, maxTokens: String(maxTokens), ...(take ? { take: String(take) } : {}) })
    return (await (await fetch(`${base}/generate/handle?${query}`)).json()) as string[]
  },
})
