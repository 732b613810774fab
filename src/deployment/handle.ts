import { RequestCancelledError, RequestTimeoutError } from '../errors.js'
import { formatReceived, getValidSeconds } from '../batching/options.js'
import type { CancelSignal } from '../batching/cancel-signal.js'
import { currentContext } from '../batching/context.js'
import { checkModelId } from './model-id.js'
import { checkDeployment, type Deployment, type InstanceOf } from './deployment.js'
import type { HandleMarker } from './handle-marker.js'
import { findReplicaSet, type ReplicaSet } from './replica-set.js'
import { RequestScope } from './request-scope.js'
import { route } from './router.js'
import { unwrap, type Outcome } from './outcome.js'

/**
 * The result of `handle.method.remote(...)`. The call starts at once; await
 * the response, or `.result({ timeoutS })`, or `.cancel()` it.
 *
 * A call made while a replica serves a request is that request's child, as
 * in Ray Serve: when the request is cancelled (the client went away, the
 * caller cancelled its own handle call) the child is cancelled too, and it
 * carries the request's deadline, so a call still queued in a batch leaves
 * its queue rather than running for nobody.
 */
export class DeploymentResponse<R> implements PromiseLike<R>, AsyncIterable<StreamItem<R>> {
  private readonly controller = new AbortController()
  private readonly promise: Promise<R>

  /**
   * `parent`: the signal of the request this call is made for; its abort
   * cancels this call. `deadline`: that request's. A call made once the
   * request is over is refused at once and reaches no replica, even when the
   * deadline's timer has not fired yet (it runs late behind a long
   * synchronous step), since nobody is left to use its result.
   */
  constructor(start: (signal: AbortSignal) => Promise<R>, parent?: CancelSignal, deadline?: number) {
    if (deadline !== undefined && deadline <= Date.now()) {
      this.controller.abort(new RequestTimeoutError('the request this handle call was made for is past its deadline'))
    } else if (parent?.aborted) this.cancelFor(parent)
    this.promise = this.controller.signal.aborted ? Promise.reject(this.controller.signal.reason as Error) : start(this.controller.signal)
    // The caller may never await a cancelled or fire-and-forget call.
    this.promise.catch(() => undefined)
    if (parent && !parent.aborted) {
      const onAbort = () => this.cancelFor(parent)
      parent.addEventListener('abort', onAbort, { once: true })
      const forget = () => parent.removeEventListener('abort', onAbort)
      this.promise.then(forget, forget)
    }
  }

  private cancelFor(parent: CancelSignal): void {
    this.controller.abort(new RequestCancelledError('the request that made this handle call was cancelled', { cause: parent.reason }))
  }

  then<A = R, B = never>(
    onFulfilled?: ((value: R) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.promise.then(onFulfilled, onRejected)
  }

  /** The result; past `timeoutS` the call is cancelled and this rejects with `RequestTimeoutError`. */
  result(options: { timeoutS?: number | undefined } = {}): Promise<R> {
    if (options.timeoutS === undefined) return this.promise
    const timeoutS = getValidSeconds('timeoutS', options.timeoutS)
    return new Promise<R>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.cancel()
        reject(new RequestTimeoutError(`the handle call took longer than ${timeoutS} s`))
      }, timeoutS * 1000)
      this.promise.then(
        (value) => {
          clearTimeout(timer)
          resolve(value)
        },
        (error: unknown) => {
          clearTimeout(timer)
          // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the call's own rejection, passed on as it is
          reject(error)
        },
      )
    })
  }

  /**
   * Iterate a streamed result (a method that returns an async iterable, such
   * as a `batch.stream` or `batch.continuous` function):
   * `for await (const token of handle.generate.remote(prompt))`. Leaving the
   * loop early cancels the stream and frees its slot in the batch.
   */
  async *[Symbol.asyncIterator](): AsyncGenerator<StreamItem<R>> {
    const value = await this.promise
    if (!value || typeof value !== 'object' || !(Symbol.asyncIterator in value)) {
      throw new TypeError('this handle call did not return a stream; await it instead of iterating it')
    }
    yield* value as AsyncIterable<StreamItem<R>>
  }

  /** Give up: a call still queued leaves its queue; awaiting rejects with `RequestCancelledError`. */
  cancel(): void {
    this.controller.abort(new RequestCancelledError('the handle call was cancelled'))
  }
}

/** What iterating a streamed response yields. */
export type StreamItem<R> = R extends AsyncIterable<infer T> ? T : never

/** Method names a handle offers: functions, not `constructor`, not `_`-prefixed, not `options` (the handle's own). */
type CallableKeys<I> = {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  [K in keyof I]: K extends 'constructor' | 'options' | `_${string}` ? never : I[K] extends (...args: any[]) => any ? K : never
}[keyof I]

/** What `handle.options()` sets for the calls made through the handle it returns (Ray's `handle.options()`). */
export interface HandleCallOptions {
  /** The model a multiplexed deployment serves these calls with: see `multiplexed()`. */
  multiplexedModelId?: string | undefined
}

export type DeploymentHandle<I> = {
  readonly [K in CallableKeys<I>]: I[K] extends (...args: infer A) => infer R ? { remote(...args: A): DeploymentResponse<Awaited<R>> } : never
} & {
  /** A handle like this one whose calls carry `options`: `handle.options({ multiplexedModelId: 'eu' }).predict.remote(x)`. */
  options(options: HandleCallOptions): DeploymentHandle<I>
} & HandleMarker<I>

/** What a handle call carries besides its arguments. */
export interface CallScope {
  /** Epoch ms: the calling request's deadline, when the call is made inside one. */
  deadline?: number | undefined
  multiplexedModelId?: string | undefined
}

/**
 * How a handle reaches a replica: in-process, on a worker thread, over
 * Durable Object RPC, or over HTTP.
 */
export type Invoke = (method: string, args: unknown[], signal: AbortSignal, scope: CallScope) => Promise<Outcome>

/** A typed proxy whose `name.remote(...args)` goes through `invoke`, and whose `options()` makes another. */
export function makeHandle<I>(invoke: Invoke, callOptions: HandleCallOptions = {}): DeploymentHandle<I> {
  const methods = new Map<string, { remote(...args: unknown[]): DeploymentResponse<unknown> }>()
  const options = (next: HandleCallOptions): DeploymentHandle<I> => {
    if (next === null || typeof next !== 'object') {
      throw new TypeError(`handle.options() takes an object such as { multiplexedModelId: 'eu' }, received ${String(next)}`)
    }
    const merged = { ...callOptions }
    if (next.multiplexedModelId !== undefined) {
      merged.multiplexedModelId = checkModelIdOption(next.multiplexedModelId)
    }
    return makeHandle<I>(invoke, merged)
  }
  const { multiplexedModelId } = callOptions
  return new Proxy({} as DeploymentHandle<I>, {
    get(_target, property) {
      // Not a thenable, not a symbol-keyed protocol: only named methods.
      if (typeof property !== 'string' || property === 'then') return undefined
      if (property === 'options') return options
      let method = methods.get(property)
      if (!method) {
        method = {
          remote: (...args: unknown[]) => {
            // Inside a replica serving a request, the call is that request's child (see DeploymentResponse).
            const parent = currentContext()
            const scope: CallScope = { deadline: parent?.deadline, multiplexedModelId }
            return new DeploymentResponse((signal) => invoke(property, args, signal, scope).then(unwrap), parent?.signal, parent?.deadline)
          },
        }
        methods.set(property, method)
      }
      return method
    },
  })
}

/**
 * A handle to `deployment`'s replicas in `env` (Ray's `DeploymentHandle`),
 * routed like HTTP requests: same router, same limits.
 *
 * ```ts
 * const handle = getHandle(adder, c.env)
 * const sum = await handle.handleBatch.remote(41) // 42
 * ```
 */
export function getHandle<D extends Deployment>(deployment: D, env: unknown, options: HandleOptions = {}): DeploymentHandle<InstanceOf<D>> {
  checkDeployment(deployment, 'getHandle', ', env')
  if (typeof options !== 'object' || options === null) {
    throw new TypeError(`getHandle()'s options must be an object like { idempotent: true }, received ${formatReceived(options)}`)
  }
  if (options.idempotent !== undefined && typeof options.idempotent !== 'boolean') {
    throw new TypeError(`getHandle()'s idempotent option must be true or false, received ${formatReceived(options.idempotent)}`)
  }
  return makeHandle<InstanceOf<D>>(callThrough(() => findReplicaSet(env, deployment) ?? throwNoReplicas(deployment, env), options))
}

/**
 * getHandle() was given an env without the deployment's replicas. Its caller
 * is code, not an HTTP client, so the error itself says what to pass, on each
 * runtime. Not an HTTPError: a route that lets it through answers a plain
 * 500, and the server log has this message.
 */
function throwNoReplicas(deployment: Deployment, env: unknown): never {
  const { name, binding } = deployment.options
  const given = env && typeof env === 'object' ? `env.${binding} is missing` : `env is ${formatReceived(env)}`
  throw new Error(
    `getHandle(): no replicas of deployment ${name} in the env it was given (${given}). Pass the env the app is served with. ` +
      `On Node: c.env in a route of the app that serve() or edgeserve run serves, with ${name} routed by ingress() or listed in ` +
      `serve(app, { deployments: [...] }); outside a route, getDeploymentHandle('${name}') from edgeserve/node finds it by name. ` +
      `On Workers: the Worker's env (c.env in a route), with the Durable Object bound as "${binding}" in wrangler.toml and its class ` +
      `exported from the Worker: export const ${binding}Object = durableObject(<the deployment>)`,
  )
}

export interface HandleOptions {
  /**
   * The methods called through this handle are safe to run twice: if a
   * replica resets mid-call (a Durable Object evicted), retry once on a fresh
   * one instead of failing with 503.
   */
  idempotent?: boolean | undefined
}

/** Handle calls through a deployment's router, held to the same limits as HTTP requests. */
export function callThrough(replicaSet: () => ReplicaSet, options: HandleOptions = {}): Invoke {
  const idempotent = options.idempotent === true
  return async (method, args, signal, { deadline, multiplexedModelId }) => {
    const replicas = replicaSet()
    // The call's one scope, as the ingress makes one for a request. Its deadline is the calling request's,
    // whose signal cancels this call at it (see DeploymentResponse).
    const scope = new RequestScope({ origin: 'handle', deadline, multiplexedModelId, callerSignal: signal, idempotent, callerEnforcesDeadline: true })
    return route(replicas, scope, { method, args })
  }
}

/** A model id given to handle.options(): a mistake in code, so a TypeError rather than a 400. */
function checkModelIdOption(value: unknown): string {
  try {
    return checkModelId(value, 'multiplexedModelId')
  } catch (error) {
    throw new TypeError(`handle.options(): ${(error as Error).message}`, { cause: error })
  }
}
