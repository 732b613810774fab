/**
 * The public options under `exactOptionalPropertyTypes`, which the README
 * tells users they may turn on: an option given a value that may be
 * undefined (`{ port: maybePort }`) means the option left out, so each one is
 * declared `?: T | undefined`, and the runtime takes undefined for the default.
 */
import { describe, expect, it } from 'vitest'
import { batch, deployment, getHandle, multiplexed } from '../../src/index.js'
import { checkServeOptions } from '../../src/runtime/node/serve-options.js'
import { typeErrorsOf } from '../support/type-errors.js'

/** Every option of the public entries, each given a value that may be undefined. */
const CONSUMER_CODE = `import { Hono } from 'hono'
import { batch, deployment, getHandle, multiplexed, type DeploymentOptions } from '../../src/index.js'
import { getDeploymentHandle, serve, type LogLevel } from '../../src/runtime/node/index.js'
import { serveWorker } from '../../src/runtime/workers/index.js'
import { connect } from '../../src/client/index.js'
import { loadModel, pad } from '../../src/onnx/node.js'

declare const maybeNumber: number | undefined
declare const maybeString: string | undefined
declare const maybeBoolean: boolean | undefined
declare const maybeLevel: LogLevel | undefined

class Adder {
  async fetch(request: Request) {
    return request.url
  }
  async add(x: number) {
    return x
  }
}
class BatchedAdder {
  async fetch(requests: Request[]) {
    return requests.map((request) => request.url)
  }
}

const add = batch(async (xs: number[]) => xs, {
  maxBatchSize: maybeNumber,
  batchWaitTimeoutS: maybeNumber,
  maxConcurrentBatches: maybeNumber,
  maxQueuedRequests: maybeNumber,
  batchSizeFn: undefined,
  batchKey: undefined,
  strideS: maybeNumber,
  allowSmallBatch: maybeBoolean,
  onBatchError: undefined,
  adaptive: maybeBoolean,
})
await add(1, { signal: undefined, deadline: maybeNumber, context: { origin: maybeString } })

const options: DeploymentOptions = { requestTimeoutS: maybeNumber, batching: undefined, autoscaling: undefined }
const adder = deployment(Adder, {
  name: maybeString,
  numReplicas: maybeNumber,
  maxOngoingRequests: maybeNumber,
  maxQueuedRequests: maybeNumber,
  requestTimeoutS: maybeNumber,
  binding: maybeString,
  batching: undefined,
})
deployment(Adder, {
  autoscaling: {
    minReplicas: maybeNumber,
    maxReplicas: maybeNumber,
    initialReplicas: maybeNumber,
    targetOngoingRequests: maybeNumber,
    upscaleDelayS: maybeNumber,
    downscaleDelayS: maybeNumber,
    lookBackPeriodS: maybeNumber,
  },
})
deployment(BatchedAdder, {
  batching: {
    maxBatchSize: maybeNumber,
    batchWaitTimeoutS: maybeNumber,
    strideS: maybeNumber,
    allowSmallBatch: maybeBoolean,
    adaptive: { latencyTargetMs: maybeNumber },
    maxBodyBytes: maybeNumber,
  },
})

const handle = getHandle(adder, {}, { idempotent: maybeBoolean }).options({ multiplexedModelId: maybeString })
await handle.add.remote(1).result({ timeoutS: maybeNumber })
getDeploymentHandle<Adder>('Adder', { app: maybeString })
multiplexed((id: string) => id, { maxModelsPerReplica: maybeNumber })

const app = new Hono()
await serve(app, {
  port: maybeNumber,
  hostname: maybeString,
  name: maybeString,
  deployments: undefined,
  env: undefined,
  rpcToken: maybeString,
  handleSignals: maybeBoolean,
  shutdownTimeoutS: maybeNumber,
  threads: { module: import.meta.url, deployments: undefined },
  logLevel: maybeLevel,
  dashboard: undefined,
})
serveWorker(app, { deployments: undefined, dashboard: undefined })
connect('http://127.0.0.1:8000', { token: 'token', fetch: undefined }).getDeploymentHandle<Adder>('Adder', { app: maybeString })

await loadModel('model.onnx', { executionProviders: undefined, runtime: undefined, numThreads: maybeNumber, instances: undefined })
pad([[1]], { to: undefined, value: maybeNumber, side: undefined, type: undefined })
console.log(options)
`

describe('options given undefined, under exactOptionalPropertyTypes', () => {
  it('type-check: every option of batch(), deployment(), handles, serve(), serveWorker(), connect() and loadModel() takes T | undefined', () => {
    expect(typeErrorsOf(CONSUMER_CODE, { exactOptionalPropertyTypes: true })).toEqual([])
  })

  it('mean the default at run time', () => {
    const unset = <K extends string>(...keys: K[]) => Object.fromEntries(keys.map((key) => [key, undefined])) as Record<K, undefined>
    class Model {}
    expect(
      deployment(Model, unset('name', 'numReplicas', 'maxOngoingRequests', 'maxQueuedRequests', 'requestTimeoutS', 'batching', 'autoscaling', 'binding'))
        .options,
    ).toEqual(deployment(Model).options)
    const batchingKeys = ['maxBatchSize', 'batchWaitTimeoutS', 'strideS', 'allowSmallBatch', 'adaptive', 'maxBodyBytes'] as const
    expect(deployment(Model, { batching: unset(...batchingKeys) }).options.batching).toEqual(deployment(Model, { batching: {} }).options.batching)
    const scalingKeys = [
      'minReplicas',
      'maxReplicas',
      'initialReplicas',
      'targetOngoingRequests',
      'upscaleDelayS',
      'downscaleDelayS',
      'lookBackPeriodS',
    ] as const
    expect(deployment(Model, { autoscaling: unset(...scalingKeys) }).options.autoscaling).toEqual(deployment(Model, { autoscaling: {} }).options.autoscaling)

    const handler = async (xs: number[]) => xs
    const batchKeys = [
      'maxBatchSize',
      'batchWaitTimeoutS',
      'maxConcurrentBatches',
      'maxQueuedRequests',
      'batchSizeFn',
      'batchKey',
      'strideS',
      'allowSmallBatch',
      'onBatchError',
      'adaptive',
    ] as const
    expect(batch(handler, unset(...batchKeys)).options).toEqual(batch(handler).options)

    const serveKeys = ['port', 'hostname', 'name', 'deployments', 'env', 'rpcToken', 'handleSignals', 'shutdownTimeoutS', 'threads'] as const
    expect(() => checkServeOptions(unset(...serveKeys))).not.toThrow()
    expect(() => multiplexed((id) => id, { maxModelsPerReplica: undefined })).not.toThrow()
    expect(() => getHandle(deployment(Model), {}, { idempotent: undefined })).not.toThrow()
  })
})
