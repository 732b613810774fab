/**
 * The demo app's model examples served on Node on one ONNX runtime: the
 * shared answers suite (model-suite.ts), then that every model ran on the
 * runtime expected and that /-/routes says so. `forced` sets
 * EDGESERVE_ONNX_RUNTIME for the test file's process (and so for the worker
 * threads it starts); without it the runtime is what 'auto' chooses.
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest'
import { app } from '../../examples/demo/app.js'
import { serve, type RunningServer } from '../../src/runtime/node/index.js'
import { describeModelExamples } from './model-suite.js'
import { modelsLoaded } from './models-loaded.js'

export function describeServedModels(title: string, expected: { runtime: string; provider: string; forced: boolean }): void {
  const runsOn = `${expected.runtime} ${expected.provider}`
  let server: RunningServer
  let log: ReturnType<typeof vi.spyOn>
  beforeAll(async () => {
    if (expected.forced) process.env.EDGESERVE_ONNX_RUNTIME = expected.runtime
    log = vi.spyOn(console, 'log').mockImplementation(() => undefined)
    server = await serve(app, { port: 0, name: `models-${expected.runtime}`, handleSignals: false })
  })
  afterAll(async () => {
    await server.close()
    vi.restoreAllMocks()
    // No later file in the same process inherits the runtime.
    if (expected.forced) delete process.env.EDGESERVE_ONNX_RUNTIME
  })

  describeModelExamples(title, () => server.url)

  it(`ran every model on ${expected.runtime}${expected.forced ? '' : ', with no code change in the examples'}`, () => {
    const loaded = modelsLoaded(log.mock.calls)
    expect(loaded.length).toBeGreaterThanOrEqual(4)
    expect(new Set(loaded.map((line) => `${line.runtime} ${line.provider}`))).toEqual(new Set([runsOn]))
  })

  it('lists each model on /-/routes with the runtime and provider that run it', async () => {
    const { models } = (await (await fetch(`${server.url}/-/routes`)).json()) as {
      models: { runtime: string; provider: string; thread: string; inputs: string[] }[]
    }
    expect(models.find((model) => model.inputs.includes('features'))).toMatchObject({
      runtime: expected.runtime,
      provider: expected.provider,
      thread: 'server',
    })
    expect(new Set(models.map((model) => `${model.runtime} ${model.provider}`))).toEqual(new Set([runsOn]))
  })
}
