/** Streaming in workerd: SSE through Worker and Durable Object, and handle streams over RPC. */
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll } from 'vitest'
import { unstable_startWorker } from 'wrangler'
import { describeStreaming } from '../helpers/streaming-suite.js'

let worker: Awaited<ReturnType<typeof unstable_startWorker>>
let base = ''

beforeAll(async () => {
  worker = await unstable_startWorker({
    config: fileURLToPath(new URL('./wrangler.toml', import.meta.url)),
    dev: { server: { hostname: '127.0.0.1', port: 0 }, inspector: false, watch: false, logLevel: 'none' },
  })
  await worker.ready
  base = (await worker.url).href.replace(/\/$/, '')
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
