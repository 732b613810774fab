/**
 * The model examples served on Node: answers equal a direct session.run.
 * onnxruntime-node is installed here (a devDependency), so 'auto' runs them
 * on it; models-web.test.ts serves the same on onnxruntime-web.
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest'
import { serve, type RunningServer } from '../../src/runtime/node/index.js'
import { app } from '../../examples/demo/app.js'
import { describeModelExamples } from '../support/model-suite.js'
import { modelsLoaded } from '../support/models-loaded.js'

let server: RunningServer
let log: ReturnType<typeof vi.spyOn>
beforeAll(async () => {
  log = vi.spyOn(console, 'log').mockImplementation(() => undefined)
  server = await serve(app, { port: 0, name: 'models-node', handleSignals: false })
})
afterAll(async () => {
  await server.close()
  vi.restoreAllMocks()
})

describeModelExamples('Node', () => server.url)

it('ran every model on onnxruntime-node, with no code change in the examples', () => {
  const loaded = modelsLoaded(log.mock.calls)
  expect(loaded.length).toBeGreaterThanOrEqual(4)
  expect(new Set(loaded.map((line) => `${line.runtime} ${line.provider}`))).toEqual(new Set(['onnxruntime-node cpu']))
})

it('lists each model on /-/routes with the runtime and provider that run it', async () => {
  const { models } = (await (await fetch(`${server.url}/-/routes`)).json()) as {
    models: { runtime: string; provider: string; thread: string; inputs: string[] }[]
  }
  expect(models.find((model) => model.inputs.includes('features'))).toMatchObject({ runtime: 'onnxruntime-node', provider: 'cpu', thread: 'server' })
  expect(new Set(models.map((model) => `${model.runtime} ${model.provider}`))).toEqual(new Set(['onnxruntime-node cpu']))
})
