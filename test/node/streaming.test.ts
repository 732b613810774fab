/** Streaming on Node: SSE over a real server, and streams through in-process handles. */
import { afterAll, beforeAll, vi } from 'vitest'
import { getDeploymentHandle, serve, type RunningServer } from '../../src/runtime/node/index.js'
import { app } from '../../examples/demo/app.js'
import type { BatchTextGenerator } from '../../examples/text-generator/generator.js'
import { describeStreaming } from '../helpers/streaming-suite.js'

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
