import type { CancelSignal } from '../../batching/cancel-signal.js'
import type { Deployment } from '../../deployment/deployment.js'
import type { ReplicaCall, ReplicaDescription, ReplicaEndpoint, ReplicaHealth } from '../../deployment/endpoint.js'
import type { Outcome } from '../../deployment/outcome.js'
import { RequestScope } from '../../deployment/request-scope.js'
import { ReplicaSet, replicaName } from '../../deployment/replica-set.js'
import { ReplicaOverloadedError, ReplicaUnavailableError } from '../../errors.js'
import type { MetricsSnapshot } from '../../metrics/registry.js'
import type { Router } from '../../deployment/router.js'
import { CoordinatedScaling, type CoordinatorStub } from './coordinated-scaling.js'
import { coordinatorName, type ReplicaControl } from './coordinator.js'
import {
  carriedRequest,
  responseFrom,
  type CarriedAnswer,
  type CarriedCall,
  type CarriedItem,
  type ClaimedAnswer,
  type StreamedAnswer,
  type WholeAnswer,
} from './carried.js'
import { GatheredCalls } from './gathered-calls.js'
import { WHOLE_BODY_BYTES } from './unread-body.js'

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
  /** Requests and handle calls this isolate gathered into one call (see gathered-calls.ts), one answer each. */
  carry(items: CarriedItem[]): Promise<CarriedAnswer[]>
  /** Carried items whose callers left after their call went. */
  dropCarried(tokens: string[]): Promise<void>
  /** A carried item's streamed answer, claimed by the request it belongs to. */
  claim(token: string): Promise<ClaimedAnswer>
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
 * running twice or hanging. Each of these holds per item in a gathered call.
 *
 * With `coalesceCalls` (the default), the requests and handle calls this
 * isolate sends the replica meanwhile go together, in one call to its
 * object (see gathered-calls.ts); a request with a large body or one of
 * unknown length, and a call whose arguments hold a stream or a function,
 * go alone, as does every call without it.
 */
export class DurableObjectReplica implements ReplicaEndpoint {
  readonly #gathered: GatheredCalls<CarriedItem, CarriedAnswer> | undefined

  constructor(
    private readonly namespace: Namespace,
    private readonly name: string,
    private readonly deployment: string,
    private readonly index: number,
    coalesceCalls = false,
  ) {
    this.#gathered = coalesceCalls
      ? new GatheredCalls({
          send: (items) => this.#stub().carry(items),
          drop: (items) => this.#stub().dropCarried(items.map((item) => item.token)),
          keepAlive: (work) => waitUntil!(work),
        })
      : undefined
  }

  fetch(request: Request, call: ReplicaCall = {}): Promise<Response> {
    const idempotent = request.method === 'GET' || request.method === 'HEAD'
    if (this.#gathered && isCarriable(request)) return this.#fetchCarried(this.#gathered, request, call, idempotent)
    // The object computes the deadline itself from requestTimeoutS, and reads the model id from the
    // request's header; a Request carries nothing else.
    return this.#withRetry(idempotent, `${request.method} request`, () => this.#stub().fetch(request))
  }

  invoke(method: string, args: unknown[], call: ReplicaCall): Promise<Outcome> {
    // Signals cannot cross RPC; the deadline and the model id can.
    const { deadline, multiplexedModelId } = call
    const bytes = this.#gathered ? carriedBytes(args) : -1
    if (bytes >= 0) {
      const item: CarriedCall = { kind: 'call', token: nextToken(), deadline, multiplexedModelId, method, args }
      return this.#invokeCarried(this.#gathered!, item, bytes, call)
    }
    return this.#withRetry(call.idempotent === true, `call of ${method}()`, () => this.#stub().invoke(method, args, { deadline, multiplexedModelId }))
  }

  async #fetchCarried(gathered: GatheredCalls<CarriedItem, CarriedAnswer>, request: Request, call: ReplicaCall, idempotent: boolean): Promise<Response> {
    waitUntil ??= await workersWaitUntil()
    const body = request.method === 'GET' || request.method === 'HEAD' ? null : await request.arrayBuffer()
    const item = carriedRequest(request, body, nextToken(), call.deadline, call.multiplexedModelId)
    const bytes = (item.body?.byteLength ?? 0) + item.url.length
    const left = callerSignalOf(call)
    const answer = await this.#withRetry(idempotent, `${request.method} request`, () => gathered.carry(item, bytes, left))
    if ('whole' in answer) return responseFrom(answer.whole)
    if ('claim' in answer) return responseFrom((await this.#claim(answer.claim, left)) as WholeAnswer | StreamedAnswer)
    throw new TypeError(`replica ${this.index} of ${this.deployment} answered a request as a handle call`)
  }

  async #invokeCarried(gathered: GatheredCalls<CarriedItem, CarriedAnswer>, item: CarriedCall, bytes: number, call: ReplicaCall): Promise<Outcome> {
    waitUntil ??= await workersWaitUntil()
    const left = callerSignalOf(call)
    const answer = await this.#withRetry(call.idempotent === true, `call of ${item.method}()`, () => gathered.carry(item, bytes, left))
    if ('outcome' in answer) return answer.outcome
    if ('claim' in answer) return (await this.#claim(answer.claim, left)) as Outcome
    throw new TypeError(`replica ${this.index} of ${this.deployment} answered a handle call as a request`)
  }

  /**
   * Claim a carried item's answer that did not come back in its call, by a
   * call of this request's own; should its caller leave meanwhile, the item
   * leaves the object's queue as it would have in the call.
   */
  async #claim(token: string, signal: CancelSignal | undefined): Promise<ClaimedAnswer> {
    const drop = () =>
      waitUntil!(
        this.#stub()
          .dropCarried([token])
          .catch(() => undefined),
      )
    signal?.addEventListener('abort', drop, { once: true })
    try {
      return await this.#stub().claim(token)
    } finally {
      signal?.removeEventListener('abort', drop)
    }
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

  /**
   * `call`, and once more if the object was reset and the call is
   * idempotent. `call` takes its own stub: one made here for every call
   * would cost each carried item a stub (an id hashed from the name) that it
   * never uses.
   */
  async #withRetry<R>(idempotent: boolean, what: string, call: () => Promise<R>): Promise<R> {
    try {
      return await call()
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
        return await call()
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
 * Whether a request can go in a gathered call: its body, if any, declared
 * small enough to read whole here (a larger one, or one of unknown length,
 * streams to the object in a call of its own), and no protocol upgrade.
 */
function isCarriable(request: Request): boolean {
  // perf: workerd makes `request.headers` anew on each read, and this runs for every routed request.
  const headers = request.headers
  if (headers.has('upgrade')) return false
  if (request.method === 'GET' || request.method === 'HEAD') return true
  const declared = headers.get('content-length')
  return declared !== null && Number(declared) <= WHOLE_BODY_BYTES
}

/**
 * What tells a carried item that its caller left: the caller's own signal
 * (a client that hung up, a handle call cancelled). Not the scope's, which
 * also aborts at the deadline: the object keeps the item's deadline itself
 * and answers 504 then, and the scope's timer would cost every request a
 * timer it does not need.
 */
function callerSignalOf(call: ReplicaCall): CancelSignal | undefined {
  return call instanceof RequestScope ? call.callerSignal : call.signal
}

/** The most values carriedBytes() looks at before sending a call's arguments alone. */
const MAX_VALUES_SIZED = 1000

/**
 * About how many bytes a handle call's arguments take, or -1 when they must
 * go in a call of their own: they hold a stream, a Request or Response, a
 * function (an RPC stub) or more than MAX_VALUES_SIZED values. A stream or
 * stub belongs to the request that made it, and the gathered call is sent
 * from whichever request started it.
 */
export function carriedBytes(args: unknown[]): number {
  let bytes = 0
  let values = 0
  const pending: unknown[] = [args]
  while (pending.length > 0) {
    const value = pending.pop()
    if (++values > MAX_VALUES_SIZED) return -1
    if (typeof value === 'string') bytes += value.length * 2
    else if (typeof value === 'function') return -1
    else if (typeof value !== 'object' || value === null) bytes += 8
    else if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) bytes += value.byteLength
    else if (Array.isArray(value)) pending.push(...(value as unknown[]))
    else if (Object.getPrototypeOf(value) === Object.prototype) pending.push(...Object.values(value as Record<string, unknown>))
    else if (value instanceof Date || value instanceof RegExp || value instanceof Map || value instanceof Set || value instanceof Error) bytes += 64
    else return -1
  }
  return bytes
}

/** Tokens name carried items in their object: unique per isolate, and across isolates by a random prefix. */
let isolatePrefix: string | undefined
let tokens = 0

function nextToken(): string {
  // Not at module load: workerd refuses random values at a Worker's global scope.
  isolatePrefix ??= crypto.randomUUID()
  return `${isolatePrefix}.${tokens++}`
}

/**
 * workerd's `waitUntil`, imported when the first gathered call is made:
 * `cloudflare:workers` exists only in workerd, and this module also loads
 * under Node (serveWorker's tests).
 */
let waitUntil: ((work: Promise<unknown>) => void) | undefined

async function workersWaitUntil(): Promise<(work: Promise<unknown>) => void> {
  return (await import('cloudflare:workers')).waitUntil
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
  // Every routed request asks: a set made already is found without looking the binding over again
  // (reading a workerd binding's properties costs more than the lookup).
  const made = typeof binding === 'object' && binding !== null ? sets.get(binding)?.get(deployment.name) : undefined
  if (made) return made
  if (!isNamespace(binding)) return undefined
  let byName = sets.get(binding)
  if (!byName) sets.set(binding, (byName = new Map<string, ReplicaSet>()))
  let set = byName.get(deployment.name)
  if (!set) {
    const replicas = Array.from(
      { length: deployment.options.numReplicas },
      (_, i) => new DurableObjectReplica(binding, replicaName(deployment, i), deployment.name, i, deployment.options.coalesceCalls),
    )
    // Autoscaled: the count comes from the coordinator object, taken fresh per call as every stub is.
    const coordinator = () => stubNamed(binding, coordinatorName(deployment))
    const scaling = deployment.options.autoscaling ? (router: Router) => new CoordinatedScaling(deployment, router, coordinator) : undefined
    byName.set(deployment.name, (set = new ReplicaSet(deployment, replicas, scaling)))
  }
  return set
}
