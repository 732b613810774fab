/** The model examples served on Node: answers equal a direct session.run. */
import { afterAll, beforeAll, vi } from 'vitest'
import { serve, type RunningServer } from '../../src/runtime/node/index.js'
import { app } from '../../examples/demo/app.js'
import { describeModelExamples } from '../support/model-suite.js'

let server: RunningServer
beforeAll(async () => {
  vi.spyOn(console, 'log').mockImplementation(() => undefined)
  server = await serve(app, { port: 0, name: 'models-node', handleSignals: false })
})
afterAll(async () => {
  await server.close()
  vi.restoreAllMocks()
})

describeModelExamples('Node', () => server.url)
