/** Streaming in workerd: SSE through Worker and Durable Object, and handle streams over RPC. */
import { workerForTests } from '../support/workerd.js'
import { describeStreaming } from '../support/streaming-suite.js'

const worker = workerForTests(new URL('./wrangler.toml', import.meta.url))

describeStreaming('workerd', {
  baseUrl: () => worker.url,
  async viaHandle(text, maxTokens, take) {
    const query = new URLSearchParams({ text, maxTokens: String(maxTokens), ...(take ? { take: String(take) } : {}) })
    return (await (await fetch(`${worker.url}/generate/handle?${query}`)).json()) as string[]
  },
})
