import { batch, type BatchControls, type BatchedFunction } from '../batching/batch.js'
import { HTTPError } from '../errors.js'
import { errorResponse, toResponse } from '../http/responses.js'
import { runInContext } from './context.js'
import { deadlineFrom, withDeadline } from './deadline.js'
import { constructReplica, type Deployment, type ReplicaContext } from './deployment.js'
import { findCallable } from './callable.js'
import { failure, type Outcome } from './outcome.js'
import { ReplicaMetrics } from '../metrics/replica-metrics.js'

/** How a handle call reaches a replica: the call's own signal and deadline. */
export interface CallMeta {
  signal?: AbortSignal
  deadline?: number
  /** Safe to retry on a fresh replica if this one resets mid-call. */
  idempotent?: boolean
}

export interface ReplicaHealth {
  deployment: string
  replica: number
  healthy: boolean
  message?: string
}

export interface ReplicaDescription {
  deployment: string
  replica: number
  started: boolean
  methods: Record<string, Record<string, unknown>>
}

type FetchMethod = (request: Request | Request[]) => unknown

/**
 * One replica of a deployment: the user's instance and the way into it.
 *
 * It is the same object on every runtime: on Node it lives in the server
 * process, on Workers inside a Durable Object. It never throws: errors become
 * JSON error responses (fetch) or failed outcomes (calls), because a Durable
 * Object boundary would strip their classes anyway.
 */
export class Replica {
  private instance: object | undefined
  private batchedFetch: BatchedFunction<Request, unknown> | undefined
  /** Requests and calls inside this replica now (for metrics and draining). */
  ongoing = 0
  readonly metrics: ReplicaMetrics

  constructor(
    readonly deployment: Deployment,
    readonly index: number,
    readonly env: unknown = {},
  ) {
    this.metrics = new ReplicaMetrics(deployment.name, index)
  }

  /**
   * The user's instance, created on first use: Workers cap start-up at one
   * second, and a model loaded in a constructor would count against it.
   */
  getInstance(): object {
    if (!this.instance) {
      const context: ReplicaContext = { deployment: this.deployment.name, replica: this.index, env: this.env }
      this.instance = constructReplica(this.deployment, context)
      this.metrics.attach(this.instance)
    }
    return this.instance
  }

  get started(): boolean {
    return this.instance !== undefined
  }

  async fetch(request: Request): Promise<Response> {
    const started = performance.now()
    const deadline = deadlineFrom(this.deployment.options.requestTimeoutS)
    this.ongoing++
    let response: Response
    try {
      const work = runInContext({ origin: 'http', signal: request.signal, deadline }, () => this.runFetch(request))
      response = toResponse(await withDeadline(work, deadline))
    } catch (error) {
      response = errorResponse(error)
    } finally {
      this.ongoing--
    }
    this.metrics.request('http', response.status, (performance.now() - started) / 1000)
    return response
  }

  private async runFetch(request: Request): Promise<unknown> {
    const instance = this.getInstance()
    const fetch = (instance as { fetch?: FetchMethod }).fetch
    if (typeof fetch !== 'function') {
      throw new HTTPError(501, `deployment ${this.deployment.name} has no fetch() method to answer HTTP requests`)
    }
    const { batching } = this.deployment.options
    if (!batching) return fetch.call(instance, request)
    this.batchedFetch ??= batch(
      async (requests: Request[]) => {
        const responses = await fetch.call(instance, requests)
        return Array.isArray(responses) ? responses.map((r) => (r instanceof Error ? r : toResponse(r))) : (responses as never)
      },
      {
        maxBatchSize: batching.maxBatchSize,
        batchWaitTimeoutS: batching.timeoutS,
        strideS: batching.strideS,
        allowSmallBatch: batching.allowSmallBatch,
      },
    )
    if (!this.metrics.watched().has('fetch')) this.metrics.watch('fetch', this.batchedFetch as BatchControls<unknown>)
    return this.batchedFetch(request)
  }

  /**
   * Health for `/-/healthz`: constructs the instance if need be, then asks
   * its `checkHealth()` (Ray's `check_health`), which may load a model; a
   * throw or `false` means unhealthy.
   */
  async health(): Promise<ReplicaHealth> {
    const base = { deployment: this.deployment.name, replica: this.index }
    try {
      const instance = this.getInstance() as { checkHealth?: () => unknown }
      if (typeof instance.checkHealth === 'function') {
        const verdict = await withDeadline(Promise.resolve(instance.checkHealth()), Date.now() + 30_000)
        if (verdict === false) return { ...base, healthy: false, message: 'checkHealth() returned false' }
      }
      return { ...base, healthy: true }
    } catch (error) {
      return { ...base, healthy: false, message: error instanceof Error ? error.message : String(error) }
    }
  }

  /** The batched methods of a started replica and their options (functions shown by name). */
  describe(): ReplicaDescription {
    const methods: ReplicaDescription['methods'] = {}
    for (const [name, controls] of this.metrics.watched()) {
      const { batchSizeFn, batchKey, maxQueuedRequests, ...plain } = controls.options
      methods[name] = {
        ...plain,
        // JSON has no Infinity; say it in words.
        maxQueuedRequests: maxQueuedRequests === Infinity ? 'unbounded' : maxQueuedRequests,
        batchSizeFn: batchSizeFn ? 'custom' : null,
        batchKey: batchKey ? 'custom' : null,
      }
    }
    return { deployment: this.deployment.name, replica: this.index, started: this.started, methods }
  }

  async call(method: string, args: unknown[], meta: CallMeta = {}): Promise<Outcome> {
    const started = performance.now()
    const deadline = meta.deadline ?? deadlineFrom(this.deployment.options.requestTimeoutS)
    this.ongoing++
    let outcome: Outcome
    try {
      const instance = this.getInstance()
      const fn = findCallable(instance, method)
      if (!Array.isArray(args)) throw new HTTPError(400, 'handle call arguments must be a list')
      const work = runInContext({ origin: 'handle', signal: meta.signal, deadline }, async () => fn.apply(instance, args))
      outcome = { ok: true, value: await withDeadline(work, deadline, meta.signal) }
    } catch (error) {
      outcome = failure(error)
    } finally {
      this.ongoing--
    }
    this.metrics.request('handle', outcome.ok ? 200 : outcome.error.status, (performance.now() - started) / 1000)
    return outcome
  }
}
