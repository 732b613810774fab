import type { Deployment } from '../../deployment/deployment.js'
import type { ReplicaCall, ReplicaDescription, ReplicaEndpoint, ReplicaHealth } from '../../deployment/endpoint.js'
import type { Outcome } from '../../deployment/outcome.js'
import { ReplicaSet, replicaName } from '../../deployment/replica-set.js'
import { ReplicaOverloadedError, ReplicaUnavailableError } from '../../errors.js'
import type { MetricsSnapshot } from '../../metrics/registry.js'
import type { Router } from '../../deployment/router.js'
import { CoordinatedScaling, type CoordinatorStub } from './coordinated-scaling.js'
import { coordinatorName, type ReplicaControl } from './coordinator.js'

/**
 * What this adapter calls on a replica's Durable Object: `fetch`, and the RPC
 * methods of the class `durableObject()` made (which declares it implements this).
 */
export interface ReplicaStub extends ReplicaControl, CoordinatorStub {
  fetch(request: Request): Promise<Response>
  /** A handle call. Signals cannot cross RPC; the deadline and the model id do. */
  invoke(method: string, args: unknown[], call?: { deadline?: number | undefined; multiplexedModelId?: string | undefined }): Promise<Outcome>
  metrics(): Promise<MetricsSnapshot>
  health(): Promise<ReplicaHealth>
  describe(): Promise<ReplicaDescription>
  /** Autoscaling: a replica reports its ongoing requests to its coordinator. */
  replicaLoad(replica: number, ongoing: number): Promise<void>
  /** Autoscaling: a retired replica tells its coordinator it has stopped. */
  replicaStopped(replica: number): Promise<void>
}

/**
 * The part of a `DurableObjectNamespace` used here. Its stubs are typed as
 * the class `durableObject()` made, whose RPC methods are `ReplicaStub`'s:
 * `isNamespace()` is where a value from the env is taken for one.
 */
interface Namespace {
  idFromName(name: string): unknown
  get(id: unknown): ReplicaStub
}

function isNamespace(value: unknown): value is Namespace {
  return typeof value === 'object' && value !== null && typeof (value as Namespace).idFromName === 'function' && typeof (value as Namespace).get === 'function'
}

/**
 * One replica's Durable Object, as the router and handles see it.
 *
 * Each call takes a fresh stub: a stub is an I/O object tied to the request
 * that made it (workerd refuses its use from another request), and a stub
 * whose object was reset keeps failing anyway. A call that saw a reset is
 * retried once when that is safe (GET, HEAD, or a handle call marked
 * idempotent); any other gets a 503 that says what happened, rather than
 * running twice or hanging.
 */
export class DurableObjectReplica implements ReplicaEndpoint {
  constructor(
    private readonly namespace: Namespace,
    private readonly name: string,
    private readonly deployment: string,
    private readonly index: number,
  ) {}

  fetch(request: Request): Promise<Response> {
    // The object computes the deadline itself from requestTimeoutS, and reads the model id from the
    // request's header; a Request carries nothing else.
    const idempotent = request.method === 'GET' || request.method === 'HEAD'
    return this.#withRetry(idempotent, `${request.method} request`, (stub) => stub.fetch(request))
  }

  invoke(method: string, args: unknown[], call: ReplicaCall): Promise<Outcome> {
    // Signals cannot cross RPC; the deadline and the model id can.
    const { deadline, multiplexedModelId } = call
    return this.#withRetry(call.idempotent === true, `call of ${method}()`, (stub) => stub.invoke(method, args, { deadline, multiplexedModelId }))
  }

  metrics(): Promise<MetricsSnapshot> {
    return this.#stub().metrics()
  }

  health(): Promise<ReplicaHealth> {
    return this.#stub()
      .health()
      .catch((error: unknown) => ({ deployment: this.deployment, replica: this.index, healthy: false, message: String(error) }))
  }

  describe(): Promise<ReplicaDescription> {
    return this.#stub().describe()
  }

  #stub(): ReplicaStub {
    return stubNamed(this.namespace, this.name)
  }

  async #withRetry<R>(idempotent: boolean, what: string, call: (stub: ReplicaStub) => Promise<R>): Promise<R> {
    try {
      return await call(this.#stub())
    } catch (error) {
      // First: an overload may also be marked retryable, and must not be retried on the same object.
      if (isOverloaded(error)) throw this.#overloaded(error, what)
      if (!isReset(error)) throw error
      if (!idempotent) {
        throw new ReplicaUnavailableError(
          `a replica of ${this.deployment} was reset while serving this ${what}; it was not retried because it is not idempotent`,
          { cause: error },
        )
      }
      try {
        return await call(this.#stub())
      } catch (retryError) {
        if (isOverloaded(retryError)) throw this.#overloaded(retryError, what)
        if (!isReset(retryError)) throw retryError
        throw new ReplicaUnavailableError(`a replica of ${this.deployment} was reset twice while serving this ${what}`, { cause: retryError })
      }
    }
  }

  #overloaded(error: { message?: unknown }, what: string): ReplicaOverloadedError {
    const message = String(error.message)
    return new ReplicaOverloadedError(
      `replica ${this.index} of ${this.deployment} is overloaded and refused this ${what} (${message}); retry later`,
      REFUSED.test(message),
      { cause: error },
    )
  }
}

/**
 * Errors from an overloaded Durable Object. workerd sets `overloaded` on any
 * error of its OVERLOADED kind that reaches a caller, including one an object
 * throws with `overloaded: true` (see test/workers/overload.test.ts).
 */
function isOverloaded(error: unknown): error is { overloaded: true; message?: unknown } {
  return typeof error === 'object' && error !== null && (error as { overloaded?: unknown }).overloaded === true
}

/**
 * The overloads in which the platform refused the request at the object's
 * queue, before the object ran it (Cloudflare's troubleshooting page lists
 * four, all "Durable Object is overloaded. ..."). Other overloads, such as an
 * isolate past its memory limit, reset the object mid-request.
 */
const REFUSED = /^(?:Error: )?Durable Object is overloaded\./

/** Errors that mean "the object went away", as workerd marks them. */
function isReset(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false
  const marks = error as { durableObjectReset?: boolean; retryable?: boolean; message?: unknown }
  return marks.durableObjectReset === true || marks.retryable === true || /Network connection lost/i.test(String(marks.message))
}

/**
 * A fresh stub of the object `name`: the one way this adapter reaches an
 * object, replica or coordinator. Fresh on every call, since a stub is tied
 * to the request that made it (see DurableObjectReplica).
 */
function stubNamed(namespace: Namespace, name: string): ReplicaStub {
  return namespace.get(namespace.idFromName(name))
}

/** A fresh stub of the object `name` in `deployment`'s namespace in `env`, or undefined without the binding. */
export function stubOf(env: unknown, deployment: Deployment, name: string): ReplicaStub | undefined {
  const namespace = env && typeof env === 'object' ? (env as Record<string, unknown>)[deployment.options.binding] : undefined
  return isNamespace(namespace) ? stubNamed(namespace, name) : undefined
}

/**
 * A deployment's replicas behind a Durable Object namespace, one set per
 * namespace object and deployment, kept for the isolate's life (so is the
 * router in it: each isolate routes by its own in-flight counts).
 */
const sets = new WeakMap<object, Map<string, ReplicaSet>>()

export function durableObjectReplicas(binding: unknown, deployment: Deployment): ReplicaSet | undefined {
  if (!isNamespace(binding)) return undefined
  let byName = sets.get(binding)
  if (!byName) sets.set(binding, (byName = new Map<string, ReplicaSet>()))
  let set = byName.get(deployment.name)
  if (!set) {
    const replicas = Array.from(
      { length: deployment.options.numReplicas },
      (_, i) => new DurableObjectReplica(binding, replicaName(deployment, i), deployment.name, i),
    )
    // Autoscaled: the count comes from the coordinator object, taken fresh per call as every stub is.
    const coordinator = () => stubNamed(binding, coordinatorName(deployment))
    const scaling = deployment.options.autoscaling ? (router: Router) => new CoordinatedScaling(deployment, router, coordinator) : undefined
    byName.set(deployment.name, (set = new ReplicaSet(deployment, replicas, scaling)))
  }
  return set
}
