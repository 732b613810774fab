import { batch, type BatchedFunction } from '../batching/batch.js'
import { HTTPError } from '../errors.js'
import { errorResponse, toResponse } from '../http/responses.js'
import { runInContext } from './context.js'
import { deadlineFrom, withDeadline } from './deadline.js'
import { constructReplica, type Deployment, type ReplicaContext } from './deployment.js'
import { findCallable } from './callable.js'
import { failure, type Outcome } from './outcome.js'

/** How a handle call reaches a replica: the call's own signal and deadline. */
export interface CallMeta {
  signal?: AbortSignal
  deadline?: number
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

  constructor(
    readonly deployment: Deployment,
    readonly index: number,
    readonly env: unknown = {},
  ) {}

  /**
   * The user's instance, created on first use: Workers cap start-up at one
   * second, and a model loaded in a constructor would count against it.
   */
  getInstance(): object {
    if (!this.instance) {
      const context: ReplicaContext = { deployment: this.deployment.name, replica: this.index, env: this.env }
      this.instance = constructReplica(this.deployment, context)
    }
    return this.instance
  }

  get started(): boolean {
    return this.instance !== undefined
  }

  async fetch(request: Request): Promise<Response> {
    const deadline = deadlineFrom(this.deployment.options.requestTimeoutS)
    this.ongoing++
    try {
      const work = runInContext({ origin: 'http', signal: request.signal, deadline }, () => this.runFetch(request))
      return toResponse(await withDeadline(work, deadline))
    } catch (error) {
      return errorResponse(error)
    } finally {
      this.ongoing--
    }
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
    return this.batchedFetch(request)
  }

  async call(method: string, args: unknown[], meta: CallMeta = {}): Promise<Outcome> {
    const deadline = meta.deadline ?? deadlineFrom(this.deployment.options.requestTimeoutS)
    this.ongoing++
    try {
      const instance = this.getInstance()
      const fn = findCallable(instance, method)
      if (!Array.isArray(args)) throw new HTTPError(400, 'handle call arguments must be a list')
      const work = runInContext({ origin: 'handle', signal: meta.signal, deadline }, async () => fn.apply(instance, args))
      return { ok: true, value: await withDeadline(work, deadline, meta.signal) }
    } catch (error) {
      return failure(error)
    } finally {
      this.ongoing--
    }
  }
}
