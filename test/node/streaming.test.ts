/** Streaming on Node: SSE over a real server, and streams through in-process handles. */
import { afterAll, beforeAll, vi } from 'vitest'
import { getDeploymentHandle, serve, type RunningServer } from '../../src/runtime/node/index.js'
import { Hono } from 'hono'
import { ingress } from '../../src/index.js'
import { textGenerator, type BatchTextGenerator } from '../../examples/text-generator/generator.js'

/** The demo's generator, paced so that overlapping requests overlap whatever the machine's speed. */
const paced = textGenerator.bind('text-generation', 'char-lm', { stepDelayMs: 3 })
const app = new Hono().get('/generate', ingress(paced)).get('/generate/stream', ingress(paced))
import { describeStreaming } from '../support/streaming-suite.js'

let server: RunningServer
beforeAll(async () => {
  vi.spyOn(console, 'log').mockImplementation(() => undefined)
  server = await serve(app, { port: 0, name: 'streaming-node', handleSignals: false })
})
afterAll(async () => {
  await server.close()
  vi.restoreAllMocks()
})

describeStreaming('Node', {
  baseUrl: () => server.url,
  async viaHandle(text, maxTokens, take = Infinity) {
    const handle = getDeploymentHandle<BatchTextGenerator>('BatchTextGenerator', { app: 'streaming-node' })
    const tokens: string[] = []
    for await (const token of handle.stream.remote(text, maxTokens)) {
      tokens.push(token)
      if (tokens.length >= take) break
    }
    return tokens
  },
})
