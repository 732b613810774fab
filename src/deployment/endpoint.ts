import type { CostPoint } from '../batching/adaptive.js'
import type { CancelSignal } from '../batching/cancel-signal.js'
import type { MetricsSnapshot } from '../metrics/registry.js'
import type { LoadedModel } from '../onnx/loaded-models.js'
import type { Outcome } from './outcome.js'

/** What one request or handle call carries into a replica. */
export interface ReplicaCall {
  /** Aborts when the caller goes away (the client hung up, the handle call was cancelled). */
  readonly signal?: CancelSignal | undefined
  /** Epoch milliseconds; past it the call fails with 504. */
  readonly deadline?: number | undefined
  /** Safe to retry on a fresh replica if this one resets mid-call (Durable Objects). */
  readonly idempotent?: boolean | undefined
  /** The model a multiplexed deployment serves the call with (already checked). */
  readonly multiplexedModelId?: string | undefined
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
  /** Each batched method with `adaptive`: the batch size it allows now, and the cost it measured. */
  adaptive: Record<string, MeasuredBatchSize>
  /**
   * A worker-thread replica's only: the models its thread loaded, which the
   * server's thread cannot see. /-/routes lists them beside the server's own.
   */
  models?: LoadedModel[]
}

/** What an adaptive batched method measured, for `/-/routes` and the dashboard. */
export interface MeasuredBatchSize {
  batchSizeLimit: number
  costCurve: CostPoint[]
}

/**
 * One replica as the router, handles and admin routes see it, wherever it
 * runs. Three implementations: `Replica` itself (in this process), a worker
 * thread's client (`runtime/node/threads`), a Durable Object's client
 * (`runtime/workers`). None of them throws for a request's own failure:
 * HTTP errors come back as JSON error responses, call errors as outcomes.
 */
export interface ReplicaEndpoint {
  fetch(request: Request, call: ReplicaCall): Promise<Response>
  invoke(method: string, args: unknown[], call: ReplicaCall): Promise<Outcome>
  metrics(): Promise<MetricsSnapshot>
  health(): Promise<ReplicaHealth>
  describe(): Promise<ReplicaDescription>
  /** Autoscaling brings the replica into service (a worker thread spawns); absent where there is nothing to start. */
  start?(): Promise<void>
  /**
   * Autoscaling took the replica out of service and it holds no request:
   * release it (its instance's `dispose()` is called, a thread ends). A later
   * request or `start()` makes a fresh one.
   */
  stop?(): Promise<void>
}
