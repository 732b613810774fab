import { describe, expect, expectTypeOf, it, vi } from 'vitest'
import { Hono } from 'hono'
import { deployment, getHandle, ingress, replicaContext } from '../../../src/index.js'
import { Router } from '../../../src/deployment/router.js'
import { RequestScope } from '../../../src/deployment/request-scope.js'
import { replicaSetOf } from '../../../src/deployment/replica-set.js'
import { BackPressureError, HTTPError, RequestCancelledError, RequestTimeoutError } from '../../../src/index.js'
import { typeErrorsOf } from '../../support/type-errors.js'

class Model {
  constructor(
    readonly task: string,
    readonly size: number,
  ) {}
}

describe('deployment()', () => {
  it('defaults to the class name and the documented options', () => {
    const d = deployment(Model)
    expect(d.name).toBe('Model')
    expect(d.options).toEqual({
      name: 'Model',
      numReplicas: 1,
      maxOngoingRequests: 100,
      maxQueuedRequests: Infinity,
      requestTimeoutS: undefined,
      batching: undefined,
      autoscaling: undefined,
      binding: 'Model',
      coalesceCalls: true,
    })
  })

  it('takes coalesceCalls: false, and refuses anything but a boolean with what to pass', () => {
    expect(deployment(Model, { coalesceCalls: false }).options.coalesceCalls).toBe(false)
    expect(() => deployment(Model, { coalesceCalls: 'no' as unknown as boolean })).toThrow(/coalesceCalls must be true .* or false, received "no"/)
  })

  it('fills in autoscaling with the documented defaults; numReplicas becomes maxReplicas', () => {
    const d = deployment(Model, { autoscaling: {} })
    expect(d.options.autoscaling).toEqual({
      minReplicas: 1,
      maxReplicas: 4,
      initialReplicas: 1,
      targetOngoingRequests: 2,
      upscaleDelayS: 5,
      downscaleDelayS: 60,
      lookBackPeriodS: 10,
    })
    expect(d.options.numReplicas).toBe(4)
    expect(deployment(Model, { autoscaling: { minReplicas: 0 } }).options.autoscaling).toMatchObject({ minReplicas: 0, initialReplicas: 0 })
  })

  it('.withOptions() switches between a fixed count and autoscaling without the other getting in the way', () => {
    const fixed = deployment(Model, { numReplicas: 3 })
    const scaled = fixed.withOptions({ autoscaling: { maxReplicas: 8 } })
    expect(scaled.options).toMatchObject({ numReplicas: 8, autoscaling: { maxReplicas: 8 } })
    expect(scaled.withOptions({ requestTimeoutS: 2 }).options.autoscaling).toEqual(scaled.options.autoscaling)
    expect(scaled.withOptions({ numReplicas: 2 }).options).toMatchObject({ numReplicas: 2, autoscaling: undefined })
  })

  it('.bind() gives the constructor its arguments, typed, without changing the original', () => {
    const d = deployment(Model)
    const bound = d.bind('text-generation', 2)
    expect(bound.args).toEqual(['text-generation', 2])
    expect(d.args).toEqual([])
    expectTypeOf<typeof d.bind>().parameters.toEqualTypeOf<[task: string, size: number]>()
  })

  it("fills in Ray's batching_config with the defaults of batch(), and a 1 MiB bound on each request's body", () => {
    const d = deployment(Model, { batching: { maxBatchSize: 32, batchWaitTimeoutS: 0.1 } })
    expect(d.options.batching).toEqual({
      maxBatchSize: 32,
      batchWaitTimeoutS: 0.1,
      strideS: 0,
      allowSmallBatch: true,
      adaptive: false,
      maxBodyBytes: 1024 * 1024,
    })
    expect(deployment(Model, { batching: { maxBodyBytes: Infinity } }).options.batching?.maxBodyBytes).toBe(Infinity)
  })

  describe('batching goes with a fetch that takes Request[], and only with it (a type error at deployment())', () => {
    class Batched {
      async fetch(requests: Request[]) {
        return requests.map((request) => request.url)
      }
    }
    class Single {
      async fetch(request: Request) {
        return request.url
      }
    }

    it('accepts each with its own options, and a class without fetch with either', () => {
      expect(deployment(Batched, { batching: { maxBatchSize: 4 } }).withOptions({ numReplicas: 2 }).options.batching?.maxBatchSize).toBe(4)
      expect(deployment(Single, { numReplicas: 2 }).options.batching).toBeUndefined()
      expect(deployment(Model, { batching: {} }).options.batching).toBeDefined()

      // @ts-expect-error: fetch takes one Request, and batching would hand it a Request[]
      deployment(Single, { batching: { maxBatchSize: 4 } })
      // @ts-expect-error: the same, added later
      deployment(Single).withOptions({ batching: {} })
      // @ts-expect-error: fetch takes a Request[], which only batching hands it
      deployment(Batched)
      // @ts-expect-error: the same, with other options
      deployment(Batched, { numReplicas: 2 })
    })

    it('the type error of batching for a fetch of one Request says what batching does and what to declare', () => {
      const code = `import { deployment } from '../../src/index.js'
class Single {
  async fetch(request: Request) {
    return request.url
  }
}
export const single = deployment(Single, { batching: { maxBatchSize: 4 } })
`
      expect(typeErrorsOf(code, {})).toEqual([
        `7: Type '{ maxBatchSize: number; }' is not assignable to type '"batching hands fetch a Request[] and expects one answer ` +
          `per request: declare fetch(requests: Request[]), or leave batching out for fetch(request: Request)"'.`,
      ])
    })
  })

  const bad: [Record<string, unknown>, RegExp][] = [
    [{ numReplicas: 0 }, /numReplicas must be a positive integer .*received 0/],
    [{ maxOngoingRequests: 'many' }, /maxOngoingRequests must be a positive integer, received "many"/],
    [{ maxQueuedRequests: 0 }, /maxQueuedRequests \(or Infinity for unbounded\)/],
    [{ maxQueuedRequests: -1 }, /-1 no longer means unbounded; pass Infinity/],
    [{ batching: { timeoutS: 0.1 } }, /batching\.timeoutS is now called batchWaitTimeoutS/],
    [{ requestTimeoutS: 0 }, /requestTimeoutS must be more than 0 seconds/],
    [{ requestTimeoutS: -1 }, /requestTimeoutS .*received -1/],
    [{ name: 'has space' }, /deployment name must be .*received "has space"/],
    [{ name: 'a-b' }, /binding must be a valid wrangler binding name .*received "a-b"/],
    [{ batching: { maxBatchSize: 0 } }, /batching\.maxBatchSize must be a positive integer/],
    [{ batching: { adaptive: 'yes' } }, /batching\.adaptive must be true, false or an object like \{ latencyTargetMs: 50 \}, received "yes"/],
    [
      { batching: { adaptive: { latencyTargetMs: 0 } } },
      /batching\.adaptive\.latencyTargetMs must be a finite number of milliseconds greater than 0, received 0/,
    ],
    [{ batching: { timeout_s: 1 } }, /batching has no option "timeout_s"; known options: maxBatchSize, batchWaitTimeoutS/],
    [{ batching: { maxBodyBytes: '1mb' } }, /batching\.maxBodyBytes must be a whole number of bytes, 0 or more \(Infinity for no limit\), received "1mb"/],
    [{ batching: { maxBodyBytes: -1 } }, /batching\.maxBodyBytes must be a whole number of bytes, 0 or more \(Infinity for no limit\), received -1/],
    [{ replicas: 2 }, /deployment\(\) has no option "replicas"/],
    [{ numReplicas: 2, autoscaling: {} }, /numReplicas and autoscaling cannot be used together: autoscaling sets the count\. Remove numReplicas \(2\)/],
    [{ autoscaling: 4 }, /autoscaling must be an object like \{ minReplicas: 1, maxReplicas: 4 \}, received 4/],
    [{ autoscaling: { minReplicas: -1 } }, /autoscaling\.minReplicas must be a whole number of replicas, 0 or more, received -1/],
    [{ autoscaling: { maxReplicas: 0 } }, /autoscaling\.maxReplicas must be a positive integer/],
    [{ autoscaling: { minReplicas: 6 } }, /minReplicas \(6\) is more than maxReplicas \(4, the default\); pass maxReplicas: 6 or more/],
    [{ autoscaling: { minReplicas: 3, maxReplicas: 2 } }, /minReplicas \(3\) is more than maxReplicas \(2\); pass maxReplicas: 3 or more/],
    [{ autoscaling: { minReplicas: 1, maxReplicas: 3, initialReplicas: 5 } }, /initialReplicas must be from minReplicas to maxReplicas \(1 to 3\), received 5/],
    [{ autoscaling: { minReplicas: 2, initialReplicas: 1 } }, /initialReplicas must be from minReplicas to maxReplicas \(2 to 4\), received 1/],
    [{ autoscaling: { targetOngoingRequests: 0 } }, /targetOngoingRequests must be a number above 0 .*received 0/],
    [{ autoscaling: { upscaleDelayS: -1 } }, /autoscaling\.upscaleDelayS must be a finite number of seconds, 0 or more, received -1/],
    [{ autoscaling: { downscaleDelayS: 'soon' } }, /autoscaling\.downscaleDelayS must be a number of seconds .*received "soon"/],
    [{ autoscaling: { lookBackPeriodS: 0 } }, /lookBackPeriodS must be more than 0 seconds/],
    [{ autoscaling: { max_replicas: 3 } }, /autoscaling has no option "max_replicas"; edgeserve spells Ray's max_replicas as maxReplicas/],
    [{ autoscaling: { maxReplica: 3 } }, /autoscaling has no option "maxReplica"; known options: minReplicas, maxReplicas/],
  ]
  for (const [options, message] of bad) {
    it(`rejects ${JSON.stringify(options)}`, () => {
      expect(() => deployment(Model, options as never)).toThrow(message)
    })
  }

  it('refuses what is not a class', () => {
    expect(() => deployment(42 as never)).toThrow(/deployment\(\) needs a class, received number/)
  })

  it('asks for a name for a class that has none', () => {
    expect(() => deployment(class {})).toThrow("deployment() was given a class without a name: pass { name: 'MyDeployment' }, or name the class")
    expect(deployment(class {}, { name: 'Anonymous' }).name).toBe('Anonymous')
  })

  it('replicaContext() is only reachable while constructing', () => {
    expect(() => replicaContext()).toThrow(/only available while a replica is being constructed/)
  })
})

describe('getHandle()', () => {
  it('refuses what is not a deployment, and options it cannot use, saying what to pass', () => {
    expect(() => getHandle(Model as never, {})).toThrow(
      new TypeError('getHandle() needs a deployment made with deployment(Class), received a function: write getHandle(deployment(Model), env)'),
    )
    expect(() => getHandle(deployment(Model), {}, 'idempotent' as never)).toThrow(
      /^getHandle\(\)'s options must be an object like \{ idempotent: true \}, received "idempotent"$/,
    )
    expect(() => getHandle(deployment(Model), {}, { idempotent: 'yes' as never })).toThrow(
      'getHandle()\'s idempotent option must be true or false, received "yes"',
    )
  })
})

describe('ingress()', () => {
  it('refuses what is not a deployment, naming the wrapping it needs', () => {
    // The usual slip: the class itself where its deployment belongs.
    expect(() => ingress(Model as never)).toThrow(
      new TypeError('ingress() needs a deployment made with deployment(Class), received a function: write ingress(deployment(Model))'),
    )
    expect(() => ingress(undefined as never)).toThrow(/received undefined: write ingress\(deployment\(MyClass\)\)$/)
  })
})

describe('finding replicas', () => {
  it('a missing binding fails with a 500 that keeps the fix to the log, which names the wrangler.toml lines once', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {})
    try {
      const d = deployment(Model, { name: 'Model' })
      const refusal = new HTTPError(500, 'deployment Model has no replicas on this server; its log says how to bind them')
      expect(() => replicaSetOf({}, d)).toThrow(refusal)
      expect(() => replicaSetOf(undefined, d)).toThrow(refusal)
      expect(logged).toHaveBeenCalledTimes(1)
      const hint = String(logged.mock.calls[0]![0])
      // The names the README's Workers sections use: the binding under the deployment's name, its class under name + "Object".
      expect(hint).toContain('env.Model is missing')
      expect(hint).toContain('[[durable_objects.bindings]]\nname = "Model"\nclass_name = "ModelObject"')
      expect(hint).toContain('new_sqlite_classes = ["ModelObject"]')
      expect(hint).toContain('export const ModelObject = durableObject(<the deployment>)')
      expect(hint).toContain('serve the app with serve() from edgeserve/node')
      // Through a route, the client gets that 500 as JSON, without the hint.
      const response = await new Hono().get('/', ingress(d)).request('/')
      expect([response.status, await response.json()]).toEqual([500, { error: { type: 'HTTPError', message: refusal.message } }])
      expect(logged).toHaveBeenCalledTimes(1)
    } finally {
      logged.mockRestore()
    }
  })
})

describe('getHandle() with an env that holds no replicas', () => {
  it('rejects its calls with what to pass on Node and on Workers, and logs nothing of its own', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {})
    try {
      class Adder {
        async add(x: number) {
          return x + 1
        }
      }
      const adder = deployment(Adder)
      const rejection = getHandle(adder, {}).add.remote(1)
      await expect(rejection).rejects.toThrow(
        new Error(
          'getHandle(): no replicas of deployment Adder in the env it was given (env.Adder is missing). Pass the env the app is served with. ' +
            'On Node: c.env in a route of the app that serve() or edgeserve run serves, with Adder routed by ingress() or listed in ' +
            "serve(app, { deployments: [...] }); outside a route, getDeploymentHandle('Adder') from edgeserve/node finds it by name. " +
            'On Workers: the Worker\'s env (c.env in a route), with the Durable Object bound as "Adder" in wrangler.toml and its class ' +
            'exported from the Worker: export const AdderObject = durableObject(<the deployment>)',
        ),
      )
      await expect(getHandle(adder, undefined).add.remote(1)).rejects.toThrow(
        /^getHandle\(\): no replicas of deployment Adder in the env it was given \(env is undefined\)\./,
      )
      expect(logged).not.toHaveBeenCalled()
    } finally {
      logged.mockRestore()
    }
  })
})

describe('Router', () => {
  const options = (numReplicas: number, maxOngoingRequests: number, maxQueuedRequests = Infinity) =>
    deployment(Model, { numReplicas, maxOngoingRequests, maxQueuedRequests }).options

  it('holds each replica to maxOngoingRequests and spreads load by power of two choices', () => {
    const router = new Router(options(4, 3))
    const taken = Array.from({ length: 12 }, () => router.tryAcquire())
    expect(taken.every((r) => r >= 0)).toBe(true)
    expect(router.load()).toEqual([3, 3, 3, 3])
    expect(router.tryAcquire()).toBe(-1)
  })

  it('prefers the less loaded of two replicas', () => {
    const router = new Router(options(2, 100))
    for (let i = 0; i < 200; i++) router.tryAcquire()
    const [a, b] = router.load()
    expect(Math.abs(a! - b!)).toBeLessThanOrEqual(1)
  })

  it('queues beyond capacity in order, up to maxQueuedRequests, then refuses at once', async () => {
    const router = new Router(options(1, 1, 2))
    expect(router.tryAcquire()).toBe(0)
    const order: string[] = []
    const first = router.acquire().then(() => order.push('first'))
    const second = router.acquire().then(() => order.push('second'))
    await expect(router.acquire()).rejects.toBeInstanceOf(BackPressureError)
    router.release(0)
    await first
    router.release(0)
    await second
    expect(order).toEqual(['first', 'second'])
  })

  it('a waiter whose signal aborts leaves the line', async () => {
    const router = new Router(options(1, 1))
    router.tryAcquire()
    const controller = new AbortController()
    const waiting = router.acquire(controller.signal)
    controller.abort()
    await expect(waiting).rejects.toBeInstanceOf(RequestCancelledError)
    expect(router.queued).toBe(0)
    router.release(0)
    expect(router.load()).toEqual([0])
  })

  it("a waiter whose request's deadline passes leaves the line with RequestTimeoutError", async () => {
    vi.useFakeTimers()
    try {
      const router = new Router(options(1, 1))
      router.tryAcquire()
      let outcome: unknown
      const scope = new RequestScope({ origin: 'http', deadline: Date.now() + 100 })
      void router.acquire(scope.signal).then(
        (r) => (outcome = r),
        (e: unknown) => (outcome = e),
      )
      await vi.advanceTimersByTimeAsync(99)
      expect(outcome).toBeUndefined()
      await vi.advanceTimersByTimeAsync(1)
      expect(outcome).toBeInstanceOf(RequestTimeoutError)
      expect(router.queued).toBe(0)
      // The replica it waited for goes to nobody when it frees.
      router.release(0)
      expect(router.load()).toEqual([0])
    } finally {
      vi.useRealTimers()
    }
  })
})
