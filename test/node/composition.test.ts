/**
 * Model composition on Node over real HTTP, as Ray Serve's: a deployment
 * bound into another (`fanOut.bind(stage)`) is hosted with the app and
 * reaches the constructor as a handle; and the calls a request fans out are
 * that request's children, so when it times out, its client goes away, or
 * its own handle call is cancelled, the children still queued leave their
 * batch queue and the stage's batched method never sees them.
 */
import { Hono } from 'hono'
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { batch, deployment, ingress, type DeploymentHandle } from '../../src/index.js'
import { getDeploymentHandle, serve, type RunningServer } from '../../src/runtime/node/index.js'
import { deferred } from '../support/deferred.js'

/** Items the stage's batched method was given, in order. */
const seen: number[] = []
let gate = deferred()

/** One item per batch; a batch waits at the gate, so the rest of a fan-out stays queued behind it. */
class Stage {
  readonly run = batch(
    async (items: number[]) => {
      seen.push(...items)
      await gate.promise
      return items.map((item) => item * 10)
    },
    { maxBatchSize: 1 },
  )

  queued(): number {
    return this.run.stats().queueLength
  }
}

class FanOut {
  constructor(private readonly stage: DeploymentHandle<Stage>) {}

  async fetch(request: Request): Promise<string> {
    const from = Number(new URL(request.url).searchParams.get('from'))
    return (await this.fanOut(from)).join(',')
  }

  async fanOut(from: number): Promise<number[]> {
    // An await before the calls, as a real ingress reads its body first: the request must still be known after it.
    await new Promise((resolve) => setTimeout(resolve, 1))
    return Promise.all([from, from + 1, from + 2].map((item) => this.stage.run.remote(item)))
  }
}

const stage = deployment(Stage)
const app = new Hono()
  .get('/fan-out', ingress(deployment(FanOut).bind(stage)))
  .get('/fan-out-timeout', ingress(deployment(FanOut, { name: 'FanOutTimeout', requestTimeoutS: 0.5 }).bind(stage)))

let server: RunningServer
let stageHandle: DeploymentHandle<Stage>
beforeAll(async () => {
  server = await serve(app, { port: 0, name: 'composition', handleSignals: false })
  stageHandle = getDeploymentHandle<Stage>('Stage', { app: 'composition' })
})
afterAll(async () => {
  gate.resolve()
  await server.close()
})

/** The first item is in the running batch and the other two are queued behind it. */
async function fannedOut(first: number): Promise<void> {
  await vi.waitFor(() => expect(seen.at(-1)).toBe(first))
  await vi.waitFor(async () => expect(await stageHandle.queued.remote()).toBe(2))
}

/** Open the gate; the stage then serves a fresh call, and has seen only `first` of the fan-out. */
async function expectOnlyFirstRan(first: number): Promise<void> {
  // The children leave the queue on the cancel, not when the gate opens.
  await vi.waitFor(async () => expect(await stageHandle.queued.remote()).toBe(0))
  gate.resolve()
  expect(await stageHandle.run.remote(7)).toBe(70)
  expect(seen).toEqual([first, 7])
}

describe('model composition', () => {
  beforeEach(() => {
    // A failed test must not leave the next one behind a closed gate.
    gate.resolve()
    seen.length = 0
    gate = deferred()
  })

  it('a deployment bound into another is hosted with the app, and reached as a handle', async () => {
    gate.resolve()
    expect(server.app.deployments.has('Stage')).toBe(true)
    expect(await (await fetch(`${server.url}/fan-out?from=1`)).text()).toBe('10,20,30')
    expect(seen).toEqual([1, 2, 3])
  })

  it('.bind() takes, for a handle parameter, a deployment of the class it calls and no other (checked by tsc)', () => {
    class Other {
      run(x: number): number {
        return x
      }
    }
    // @ts-expect-error Other is not Stage: a handle to it would not have Stage's methods
    const wrong = deployment(FanOut).bind(deployment(Other))
    const right = deployment(FanOut).bind(stage)
    expect(right.args).toEqual([stage])
    expect(wrong.args).toHaveLength(1)
  })

  it('a request past its requestTimeoutS gets 504, and its queued stage calls leave the queue', async () => {
    const answer = fetch(`${server.url}/fan-out-timeout?from=100`)
    await fannedOut(100)
    const response = await answer
    expect(response.status).toBe(504)
    await expectOnlyFirstRan(100)
  })

  it('a client that goes away takes its queued stage calls with it', async () => {
    const controller = new AbortController()
    const answer = fetch(`${server.url}/fan-out?from=200`, { signal: controller.signal }).catch((error: unknown) => error)
    await fannedOut(200)
    controller.abort()
    expect(await answer).toBeInstanceOf(Error)
    await expectOnlyFirstRan(200)
  })

  it('cancelling a handle call cancels the calls it fanned out', async () => {
    const call = getDeploymentHandle<FanOut>('FanOut', { app: 'composition' }).fanOut.remote(300)
    await fannedOut(300)
    call.cancel()
    await expect(call).rejects.toMatchObject({ name: 'RequestCancelledError' })
    await expectOnlyFirstRan(300)
  })
})
