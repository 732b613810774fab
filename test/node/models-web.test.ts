/**
 * The model examples served on Node with onnxruntime-web, as for an app
 * without onnxruntime-node: the same suite as models.test.ts, with
 * EDGESERVE_ONNX_RUNTIME set for this test file's process (and so for the
 * worker threads it starts).
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest'
import { serve, type RunningServer } from '../../src/runtime/node/index.js'
import { app } from '../../examples/demo/app.js'
import { describeModelExamples } from '../support/model-suite.js'
import { modelsLoaded } from '../support/models-loaded.js'

let server: RunningServer
let log: ReturnType<typeof vi.spyOn>
beforeAll(async () => {
  process.env.EDGESERVE_ONNX_RUNTIME = 'onnxruntime-web'
  log = vi.spyOn(console, 'log').mockImplementation(() => undefined)
  server = await serve(app, { port: 0, name: 'models-node-web', handleSignals: false })
})
afterAll(async () => {
  await server.close()
  vi.restoreAllMocks()
  delete process.env.EDGESERVE_ONNX_RUNTIME
})

describeModelExamples('Node with onnxruntime-web', () => server.url)

it('ran every model on onnxruntime-web', () => {
  const loaded = modelsLoaded(log.mock.calls)
  expect(loaded.length).toBeGreaterThanOrEqual(4)
  expect(new Set(loaded.map((line) => `${line.runtime} ${line.provider}`))).toEqual(new Set(['onnxruntime-web wasm']))
})

it('lists each model on /-/routes with the runtime and provider that run it', async () => {
  const { models } = (await (await fetch(`${server.url}/-/routes`)).json()) as {
    models: { runtime: string; provider: string; thread: string; inputs: string[] }[]
  }
  expect(models.find((model) => model.inputs.includes('features'))).toMatchObject({ runtime: 'onnxruntime-web', provider: 'wasm', thread: 'server' })
  expect(new Set(models.map((model) => `${model.runtime} ${model.provider}`))).toEqual(new Set(['onnxruntime-web wasm']))
})
