import { batch, type BatchedFunction } from '../batching/batch.js'
import { startNextBatchNow } from '../batching/controls.js'
import { errorResponse, HTTPError } from '../errors.js'
import { holdBody, unreadableBodies } from './body/held.js'
import { ReplicaMetrics, type RequestMeter } from '../metrics/replica-metrics.js'
import type { MetricsSnapshot } from '../metrics/registry.js'
import { findCallable } from './callable.js'
import { requestContext } from '../batching/context.js'
import { deadlineFrom, raceTimeout, RequestScope } from './request-scope.js'
import { constructReplica, isDeployment, type Deployment, type ReplicaContext } from './deployment.js'
import { getHandle } from './handle.js'
import type { ReplicaCall, ReplicaDescription, ReplicaEndpoint, ReplicaHealth } from './endpoint.js'
import { failure, type Outcome } from './outcome.js'
import { disposeInstance } from './dispose.js'
import { modelCachesOf, type ModelCache } from './multiplexed.js'

type FetchMethod = (request: Request | Request[]) => unknown

/** How long `checkHealth()` may take before the replica counts as unhealthy. */
const HEALTH_TIMEOUT_MS = 30_000

/**
 * One replica of a deployment: the user's instance and the way into it.
 *
 * The same object on every runtime: on Node it lives in the server process
 * (or a worker thread), on Workers inside a Durable Object. It never throws
 * for a request's failure: errors become JSON error responses (fetch) or
 * failed outcomes (calls), because a Durable Object boundary would strip
 * their classes anyway.
 */
export class Replica implements ReplicaEndpoint {
  #instance: object | undefined
  #batchedFetch: BatchedFunction<Request, unknown> | undefined
  /** The instance's multiplexed functions: a request for a model keeps that model from eviction while it runs. */
  #models: ModelCache<unknown>[] = []
  readonly #metrics: ReplicaMetrics
  readonly #http: RequestMeter
  readonly #handle: RequestMeter

  constructor(
    readonly deployment: Deployment,
    readonly index: number,
    readonly env: unknown = {},
  ) {
    this.#metrics = new ReplicaMetrics(deployment.name, index)
    this.#http = this.#metrics.requestMeter('http')
    this.#handle = this.#metrics.requestMeter('handle')
  }

  /**
   * The user's instance, created on first use: Workers cap start-up at one
   * second, and a model loaded in a constructor would count against it.
   */
  instance(): object {
    if (!this.#instance) {
      const context: ReplicaContext = { deployment: this.deployment.name, replica: this.index, env: this.env }
      // Ray's model composition: a deployment bound as an argument arrives as a handle to it.
      const bound = this.deployment.args.some(isDeployment)
      const args = bound ? this.deployment.args.map((arg) => (isDeployment(arg) ? getHandle(arg, this.env) : arg)) : this.deployment.args
      const instance = constructReplica(this.deployment, context, args)
      this.#models = modelCachesOf(instance)
      this.#metrics.watchModels(this.#models)
      this.#metrics.attach(instance)
      this.#instance = instance
    }
    return this.#instance
  }

  get started(): boolean {
    return this.#instance !== undefined
  }

  /**
   * Autoscaling removed this replica and it holds no request: forget the
   * instance at once (a later request makes a fresh one), then call its
   * `dispose()` if it has one (sync or async; a throw is logged), so it can
   * release a model session or close a connection.
   */
  async stop(): Promise<void> {
    const instance = this.#instance
    const models = this.#models
    this.#instance = undefined
    this.#batchedFetch = undefined
    this.#models = []
    this.#metrics.detach()
    await Promise.all(models.map((cache) => cache.clear()))
    if (instance) await disposeInstance(instance, this.deployment.name, this.index)
  }

  async fetch(request: Request, call: ReplicaCall = {}): Promise<Response> {
    return responseOf(await this.answer(request, call))
  }

  /**
   * As `fetch()`, but a plain value the user's `fetch()` returned comes back
   * as the parts of its answer: a replica thread sends those to the server
   * thread as they are, where a Response would be built only to be read.
   */
  async answer(request: Request, call: ReplicaCall = {}): Promise<FetchAnswer> {
    const started = performance.now()
    const scope = this.#scopeOf(call, 'http')
    let answer: FetchAnswer
    let modelId: string | undefined
    try {
      const instance = this.#instance ?? this.instance()
      const fetch = (instance as { fetch?: FetchMethod }).fetch
      if (typeof fetch !== 'function') {
        throw new HTTPError(501, `deployment ${this.deployment.name} has no fetch() method to answer HTTP requests`)
      }
      if (scope.multiplexedModelId !== undefined) modelId = this.#pinModel(scope.multiplexedModelId)
      // In the request's scope, as a method's own batched calls are: with `batching`, whole requests are
      // the batch items, and the queue takes the call's signal, model id and context from the scope.
      const work = this.deployment.options.batching
        ? this.#fetchInBatch(instance, fetch, request, scope)
        : Promise.resolve(requestContext.run(scope, () => fetch.call(instance, request)))
      // Without a deadline an HTTP answer waits for the method: a client that left reads nothing anyway.
      answer = answerOf(await (scope.deadline === undefined ? work : scope.raceDeadline(work)))
    } catch (error) {
      answer = { response: errorResponse(error) }
    }
    if (scope !== call) scope.close()
    if (modelId !== undefined) this.#unpinModel(modelId)
    this.#http.record('response' in answer ? answer.response.status : answer.plain.status, (performance.now() - started) / 1000)
    return answer
  }

  /**
   * A request joins its batch only once its body is in: the class's `fetch`
   * reads the bodies of its whole batch together, so a client that sent its
   * body slowly would hold every request batched with it, and the calls
   * queued behind them, until its deadline.
   */
  async #fetchInBatch(instance: object, fetch: FetchMethod, request: Request, scope: RequestScope): Promise<unknown> {
    await holdBody(request, this.deployment.options.batching!.maxBodyBytes)
    const batched = (this.#batchedFetch ??= this.#batchFetch(instance, fetch))
    return requestContext.run(scope, () => batched(request))
  }

  /** Ray's `batching_config`: the class's `fetch` receives `Request[]` and returns one answer per request. */
  #batchFetch(instance: object, fetch: FetchMethod): BatchedFunction<Request, unknown> {
    const { maxBatchSize, batchWaitTimeoutS, strideS, allowSmallBatch, adaptive } = this.deployment.options.batching!
    const batched = batch(
      async (requests: Request[]) => {
        try {
          // An Error fails its own request; any other answer becomes that request's
          // Response in answer(), or on a thread its answer's parts, never built twice.
          return (await fetch.call(instance, requests)) as unknown[] // not an array: the queue reports the broken contract
        } catch (error) {
          // A body that could not be read as fetch asked (not JSON, say) fails its own request alone, as a
          // malformed item does: the others run again without it.
          throw (await unreadableBodies(requests, error)) ?? error
        }
      },
      { maxBatchSize, batchWaitTimeoutS, strideS, allowSmallBatch, adaptive },
    )
    this.#metrics.watch('fetch', batched)
    return batched
  }

  /** A handle call of `method`, run in the call's scope: its batched calls inherit the call's signal and deadline. */
  async invoke(method: string, args: unknown[], call: ReplicaCall = {}): Promise<Outcome> {
    const started = performance.now()
    const scope = this.#scopeOf(call, 'handle')
    let outcome: Outcome
    let modelId: string | undefined
    try {
      const instance = this.instance()
      const fn = findCallable(instance, method)
      if (scope.multiplexedModelId !== undefined) modelId = this.#pinModel(scope.multiplexedModelId)
      if (!Array.isArray(args)) throw new HTTPError(400, 'handle call arguments must be a list')
      outcome = { ok: true, value: await scope.raceDeadline(Promise.resolve(requestContext.run(scope, () => fn.apply(instance, args)))) }
    } catch (error) {
      outcome = failure(error)
    }
    if (scope !== call) scope.close()
    if (modelId !== undefined) this.#unpinModel(modelId)
    this.#handle.record(outcome.ok ? 200 : outcome.error.status, (performance.now() - started) / 1000)
    return outcome
  }

  /**
   * The scope the call runs in: the caller's own when it made one (the
   * ingress, a handle) and this deployment's `requestTimeoutS` allows no
   * less; else one made here, with the earlier of the two deadlines (a call
   * from a Durable Object's or a thread's client, a test).
   */
  #scopeOf(call: ReplicaCall, origin: 'http' | 'handle'): RequestScope {
    const { requestTimeoutS } = this.deployment.options
    if (call instanceof RequestScope && requestTimeoutS === undefined) return call
    const own = deadlineFrom(requestTimeoutS)
    const deadline = call.deadline === undefined || (own !== undefined && own < call.deadline) ? own : call.deadline
    if (call instanceof RequestScope && call.deadline === deadline) return call
    return new RequestScope({ origin, deadline, multiplexedModelId: call.multiplexedModelId, callerSignal: call.signal, idempotent: call.idempotent })
  }

  /** A multiplexed instance's models: the call's is kept loaded while the call runs. Returns the id pinned. */
  #pinModel(modelId: string): string | undefined {
    this.instance() // made on first use, when its multiplexed functions are found
    if (this.#models.length === 0) return undefined
    for (const cache of this.#models) cache.pin(modelId)
    return modelId
  }

  #unpinModel(modelId: string): void {
    for (const cache of this.#models) cache.unpin(modelId)
  }

  /** Where the replica is reached by calls from outside its process (a Durable Object): one came, carrying `items`. */
  callArrived(items: number): void {
    this.#metrics.callArrived(items)
  }

  /**
   * What waits in this replica's batch queues now waits for no more calls
   * (its batched `fetch` and the instance's batched methods): answers held
   * for these calls' must not wait out a batch's wait (see carried-items.ts).
   */
  startWaitingBatches(): void {
    for (const controls of this.#metrics.watched().values()) startNextBatchNow(controls)
  }

  async metrics(): Promise<MetricsSnapshot> {
    return this.#metrics.snapshot()
  }

  /**
   * Health for `/-/healthz`: constructs the instance if need be, then asks
   * its `checkHealth()` (Ray's `check_health`), which may load a model; a
   * throw or `false` means unhealthy.
   */
  async health(): Promise<ReplicaHealth> {
    const base = { deployment: this.deployment.name, replica: this.index }
    try {
      const instance = this.instance() as { checkHealth?: () => unknown }
      if (typeof instance.checkHealth === 'function') {
        const verdict = await raceTimeout(Promise.resolve(instance.checkHealth()), HEALTH_TIMEOUT_MS)
        if (verdict === false) return { ...base, healthy: false, message: 'checkHealth() returned false' }
      }
      return { ...base, healthy: true }
    } catch (error) {
      return { ...base, healthy: false, message: error instanceof Error ? error.message : String(error) }
    }
  }

  /** The batched methods of a started replica and their options (functions shown by name). */
  async describe(): Promise<ReplicaDescription> {
    const methods: ReplicaDescription['methods'] = {}
    const measured: ReplicaDescription['adaptive'] = {}
    for (const [name, controls] of this.#metrics.watched()) {
      if (controls.options.adaptive !== false) measured[name] = { batchSizeLimit: controls.stats().batchSizeLimit, costCurve: controls.costCurve() }
      const { batchSizeFn, batchKey, maxQueuedRequests, adaptive, ...plain } = controls.options
      methods[name] = {
        ...plain,
        // As the user spells it: JSON would drop `latencyTargetMs: undefined` and show `true` as {}.
        adaptive: adaptive === false || adaptive.latencyTargetMs === undefined ? adaptive !== false : adaptive,
        // JSON has no Infinity; say it in words.
        maxQueuedRequests: maxQueuedRequests === Infinity ? 'unbounded' : maxQueuedRequests,
        batchSizeFn: batchSizeFn ? 'custom' : null,
        batchKey: batchKey ? 'custom' : null,
      }
    }
    return { deployment: this.deployment.name, replica: this.index, started: this.started, methods, adaptive: measured }
  }
}

/**
 * What a deployment's `fetch()` answered with a plain value, as the parts of
 * the HTTP answer: a replica on a worker thread sends these parts to the
 * server thread as they are, without building a Response to read back.
 */
export interface PlainAnswer {
  status: 200 | 204
  /** Undefined for no body. */
  contentType: string | undefined
  body: string | Uint8Array | ArrayBuffer | null
}

/** A deployment's answer to a request: a Response, or a plain value's parts. */
export type FetchAnswer = { response: Response } | { plain: PlainAnswer }

/**
 * What a deployment's `fetch()` returned, as Ray Serve treats `__call__`'s
 * result: a Response as is, a stream as an octet-stream Response, nothing
 * as 204, text as text/plain, bytes as octet-stream and any other value as
 * JSON, these last as the parts of their answer.
 */
export function answerOf(value: unknown): FetchAnswer {
  if (value === undefined || value === null) return { plain: { status: 204, contentType: undefined, body: null } }
  if (typeof value === 'string') return { plain: { status: 200, contentType: 'text/plain; charset=utf-8', body: value } }
  if (value instanceof Uint8Array || value instanceof ArrayBuffer) return { plain: { status: 200, contentType: 'application/octet-stream', body: value } }
  if (isResponse(value)) return { response: value }
  if (value instanceof ReadableStream) return { response: new Response(value, { headers: { 'content-type': 'application/octet-stream' } }) }
  // JSON.stringify answers undefined for a function or a symbol: no body, as before.
  return { plain: { status: 200, contentType: 'application/json', body: JSON.stringify(value) ?? null } }
}

/** A deployment's answer as a Response: the one it gave, or one built from a plain value's parts. */
export function responseOf(answer: FetchAnswer): Response {
  if ('response' in answer) return answer.response
  const { status, contentType, body } = answer.plain
  return new Response(
    body as ConstructorParameters<typeof Response>[0],
    contentType === undefined ? { status } : { status, headers: { 'content-type': contentType } },
  )
}

/**
 * `instanceof Response` is not enough: @hono/node-server swaps the global
 * Response for a lighter class, and `Response.json()` may still build the
 * platform's own; other realms have their own class too.
 */
export function isResponse(value: unknown): value is Response {
  if (value instanceof Response) return true
  return (
    typeof value === 'object' &&
    value !== null &&
    Object.prototype.toString.call(value) === '[object Response]' &&
    typeof (value as Response).status === 'number'
  )
}
