import type { CancelSignal } from '../batching/cancel-signal.js'
import { withResolvers } from '../batching/resolvers.js'
import { BackPressureError, cancellation, ReplicaOverloadedError } from '../errors.js'
import type { ResolvedDeploymentOptions } from './options.js'
import type { Outcome } from './outcome.js'
import type { ReplicaEndpoint } from './endpoint.js'
import type { RequestScope } from './request-scope.js'

/** The longest delay setTimeout takes (2^31 - 1 ms, about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1

/** How long a replica that said it is overloaded gets no new requests while others have room: the Retry-After it sent. */
export const OVERLOAD_AVOID_MS = 1000

class Waiter {
  timer: ReturnType<typeof setTimeout> | undefined = undefined

  constructor(
    readonly router: Router,
    readonly resolve: (replica: number) => void,
    readonly reject: (error: Error) => void,
    readonly signal: CancelSignal | undefined,
  ) {}

  handleEvent(): void {
    this.router.dropWaiter(this, cancellation(this.signal?.reason))
  }
}

/** What an autoscaler hears from the router it steers. */
export interface RouterEvents {
  /** A replica past the count (being removed) has answered the last request it held. */
  drained(replica: number): void
  /** A request began to wait while there are no replicas at all (scaled to zero). */
  demand(): void
}

/**
 * Picks a replica for each request: power of two choices over the in-flight
 * counts this router has sent, holding each replica to `maxOngoingRequests`.
 *
 * Two random replicas, the less busy wins: nearly as good as always taking
 * the least busy one, without a global view (each Worker isolate has its own
 * router, and none sees the others' counts). When every replica is at its
 * limit, requests wait here in order, up to `maxQueuedRequests`.
 *
 * Only replicas 0 .. `replicas` - 1 take new requests. An autoscaler moves
 * that count (`setReplicas`); a replica past it is being removed: it gets
 * nothing new, finishes what it holds, and `events.drained` says when.
 */
export class Router {
  private readonly inFlight: number[]
  private readonly waiting: Waiter[] = []
  private active: number
  /** Per replica, until when (epoch ms) it is avoided; undefined while none is (the common case costs one check). */
  private avoidUntil: number[] | undefined = undefined
  events: RouterEvents | undefined = undefined

  constructor(readonly options: ResolvedDeploymentOptions) {
    this.inFlight = new Array<number>(options.numReplicas).fill(0)
    this.active = options.autoscaling ? options.autoscaling.initialReplicas : options.numReplicas
  }

  /** Replicas taking new requests now. */
  get replicas(): number {
    return this.active
  }

  /**
   * Route over `count` replicas from now on. Waiters get the new room at
   * once; replicas past the count take nothing new, and those already idle
   * are reported drained.
   */
  setReplicas(count: number): void {
    if (!Number.isInteger(count) || count < 0 || count > this.inFlight.length) {
      throw new RangeError(`replica count must be from 0 to ${this.inFlight.length}, received ${count}`)
    }
    const before = this.active
    this.active = count
    for (let replica = count; replica < before; replica++) {
      if (this.inFlight[replica] === 0) this.events?.drained(replica)
    }
    while (this.waiting.length > 0) {
      const replica = this.choose()
      if (replica < 0) break
      this.inFlight[replica]!++
      const waiter = this.waiting.shift()!
      this.forget(waiter)
      waiter.resolve(replica)
    }
  }

  /** Requests held by replicas plus those waiting here: the load an autoscaler follows. */
  ongoing(): number {
    let total = this.waiting.length
    for (const n of this.inFlight) total += n
    return total
  }

  /**
   * A replica with room now, counted as taken; -1 if all are full. With a
   * multiplexed model id, the replica that model's requests go to while it
   * has room (see chooseFor).
   */
  tryAcquire(modelId?: string): number {
    if (this.waiting.length > 0) return -1 // keep order: earlier waiters go first
    const replica = modelId === undefined ? this.choose() : this.chooseFor(modelId)
    if (replica >= 0) this.inFlight[replica]!++
    return replica
  }

  /**
   * Wait for a replica (when `tryAcquire()` found none), until one frees or
   * `signal` aborts: the request's scope's signal, which also aborts at its
   * deadline (see RequestScope).
   */
  acquire(signal?: CancelSignal, modelId?: string): Promise<number> {
    const replica = this.tryAcquire(modelId)
    if (replica >= 0) return Promise.resolve(replica)
    const { maxQueuedRequests, name } = this.options
    if (this.waiting.length >= maxQueuedRequests) {
      return Promise.reject(
        new BackPressureError(
          `deployment ${name} is at capacity: every replica holds maxOngoingRequests and ` +
            `${this.waiting.length} requests are waiting (maxQueuedRequests: ${maxQueuedRequests}); retry later`,
        ),
      )
    }
    if (signal?.aborted) return Promise.reject(cancellation(signal.reason))
    // Settled by the request that frees a replica: see withResolvers() for why not new Promise().
    const { promise, resolve, reject } = withResolvers<number>()
    const waiter = new Waiter(this, resolve, reject, signal)
    this.waiting.push(waiter)
    signal?.addEventListener('abort', waiter, { once: true })
    // A timer that does nothing: on Workers each request has its own I/O
    // context, and workerd cancels as hung (a 500) a request that waits
    // only on a promise another request will resolve. A pending timer of
    // the waiting request is what keeps it alive meanwhile.
    waiter.timer = setTimeout(() => undefined, MAX_TIMER_MS)
    // Last: an autoscaler may start a replica and hand it to this waiter at once, clearing its timer.
    if (this.active === 0) this.events?.demand()
    return promise
  }

  /** Give a replica back; the oldest waiter, if any, takes it over, unless the replica is being removed. */
  release(replica: number): void {
    if (replica < this.active) {
      const waiter = this.waiting.shift()
      if (waiter) {
        this.forget(waiter)
        waiter.resolve(replica)
        return
      }
    }
    if (--this.inFlight[replica]! === 0 && replica >= this.active) this.events?.drained(replica)
  }

  dropWaiter(waiter: Waiter, reason: Error): void {
    const at = this.waiting.indexOf(waiter)
    if (at < 0) return // already served
    this.waiting.splice(at, 1)
    this.forget(waiter)
    waiter.reject(reason)
  }

  /**
   * A replica said it is overloaded: send it nothing new for
   * OVERLOAD_AVOID_MS while another replica has room. Not a ban: with every
   * replica avoided or full, routing goes on as if none were.
   */
  avoid(replica: number, forMs = OVERLOAD_AVOID_MS): void {
    this.avoidUntil ??= new Array<number>(this.inFlight.length).fill(0)
    this.avoidUntil[replica] = Date.now() + forMs
  }

  /** Requests in flight per replica, as sent by this router. */
  load(): readonly number[] {
    return this.inFlight
  }

  get queued(): number {
    return this.waiting.length
  }

  private forget(waiter: Waiter): void {
    if (waiter.timer !== undefined) clearTimeout(waiter.timer)
    waiter.signal?.removeEventListener('abort', waiter)
  }

  /**
   * Model affinity without shared state: rendezvous hashing ranks the
   * replicas for each model id the same way in every router (every Worker
   * isolate, every process), so a model's requests go to the one replica
   * that has loaded it, and a change in the replica count moves only the
   * models of the replicas that came or went. When that replica is at
   * `maxOngoingRequests`, the next in the model's ranking takes the request
   * (and loads the model too), as Ray Serve spills a busy model over.
   */
  private chooseFor(modelId: string): number {
    const avoided = this.avoided()
    if (avoided) {
      const best = this.rankFor(modelId, avoided)
      if (best >= 0) return best
    }
    return this.rankFor(modelId, undefined)
  }

  private rankFor(modelId: string, avoided: readonly boolean[] | undefined): number {
    const { maxOngoingRequests } = this.options
    const load = this.inFlight
    const seed = hashString(modelId)
    let best = -1
    let bestScore = -1
    for (let replica = 0; replica < this.active; replica++) {
      if (load[replica]! >= maxOngoingRequests || avoided?.[replica]) continue
      const score = mix32(seed ^ Math.imul(replica + 1, 0x9e3779b1))
      if (score > bestScore) {
        best = replica
        bestScore = score
      }
    }
    return best
  }

  /** Which replicas are avoided now, or undefined if none is (forgetting the marks once all have passed). */
  private avoided(): boolean[] | undefined {
    const until = this.avoidUntil
    if (until === undefined) return undefined
    const now = Date.now()
    const avoided = until.map((t) => t > now)
    if (!avoided.includes(true)) this.avoidUntil = undefined
    return this.avoidUntil && avoided
  }

  private choose(): number {
    if (this.avoidUntil !== undefined) {
      const avoided = this.avoided()
      if (avoided) {
        const least = this.leastLoaded(avoided)
        if (least >= 0) return least
      }
    }
    const { maxOngoingRequests } = this.options
    // Not options.numReplicas: with autoscaling the count moves.
    const numReplicas = this.active
    const load = this.inFlight
    if (numReplicas <= 1) return numReplicas === 1 && load[0]! < maxOngoingRequests ? 0 : -1
    const a = Math.floor(Math.random() * numReplicas)
    let b = Math.floor(Math.random() * (numReplicas - 1))
    if (b >= a) b++
    const best = load[a]! <= load[b]! ? a : b
    if (load[best]! < maxOngoingRequests) return best
    // Both samples are full: fall back to any replica with room.
    return this.leastLoaded(undefined)
  }

  /** The least busy replica with room, leaving out the avoided ones; -1 if none. */
  private leastLoaded(avoided: readonly boolean[] | undefined): number {
    const { maxOngoingRequests } = this.options
    const load = this.inFlight
    let least = -1
    for (let i = 0; i < this.active; i++) {
      if (avoided?.[i]) continue
      if (load[i]! < maxOngoingRequests && (least < 0 || load[i]! < load[least]!)) least = i
    }
    return least
  }
}

/** A handle call as `route()` sends it: the method's name and its arguments. */
export interface MethodCall {
  readonly method: string
  readonly args: unknown[]
}

/**
 * What route() uses of a deployment's ReplicaSet. Named here, not imported:
 * replica-set.ts builds its set around this file's Router.
 */
export interface RoutedReplicas {
  readonly router: Router
  readonly replicas: readonly ReplicaEndpoint[]
  readonly scaling: { readonly beforeRoute?: (() => Promise<void>) | undefined }
}

/**
 * One request (a `Request`, from the ingress) or handle call (a
 * `MethodCall`) taken to a replica of `set`, the one way both go: a replica
 * from the router (one with room now, else the first to free up, waited for
 * with the scope's signal), the call sent to it, the replica given back.
 * The caller makes the scope and hands it over: `route()` closes it once
 * the call is answered.
 *
 * A replica that answers it is overloaded (a Durable Object past its limit)
 * gets no new calls for a moment (`Router.avoid`), and a call it refused
 * before running it goes once to another replica with room, if it can be
 * sent again: a handle call, or a request without a body (a body went with
 * the first attempt). Otherwise, or with no other replica, the overload is
 * the answer: a 503 with Retry-After.
 *
 * One function without closures: every request runs it (test/node/request-path.test.ts counts them).
 */
export async function route(set: RoutedReplicas, scope: RequestScope, call: Request): Promise<Response>
export async function route(set: RoutedReplicas, scope: RequestScope, call: MethodCall): Promise<Outcome>
export async function route(set: RoutedReplicas, scope: RequestScope, call: Request | MethodCall): Promise<Response | Outcome> {
  const { router, replicas, scaling } = set
  const modelId = scope.multiplexedModelId
  let first = -1
  /** The replica a call refused by an overloaded `first` went to instead. */
  let second = -1
  try {
    // Workers, autoscaled: bring this isolate's replica count up to date first.
    if (scaling.beforeRoute) await scaling.beforeRoute()
    first = router.tryAcquire(modelId)
    if (first < 0) first = await router.acquire(scope.signal, modelId)
    for (let replica = first; ; replica = second) {
      try {
        // A caller that went away meanwhile (a client hung up, a handle call was cancelled) is sent nowhere.
        if (scope.aborted) throw cancellation(scope.reason)
        if (scope.callerSignal?.aborted) throw cancellation(scope.callerSignal.reason)
        const endpoint = replicas[replica]!
        return await (call instanceof Request ? endpoint.fetch(call, scope) : endpoint.invoke(call.method, call.args, scope))
      } catch (error) {
        if (!(error instanceof ReplicaOverloadedError)) throw error
        router.avoid(replica)
        if (replica !== first || !error.refused || (call instanceof Request && call.body !== null)) throw error
        // Only a replica with room now: waiting in line for one is not worth it after an overload.
        second = router.tryAcquire(modelId)
        // With every other replica full the router may hand back the same one; it is not asked twice.
        if (second < 0 || second === first) throw error
      }
    }
  } finally {
    if (first >= 0) router.release(first)
    if (second >= 0) router.release(second)
    scope.close()
  }
}

/** FNV-1a over UTF-16 code units: a model id to 32 bits. */
function hashString(text: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193)
  return hash >>> 0
}

/** A 32-bit finalizer (murmur3's): every input bit moves every output bit, so rankings differ per model. */
function mix32(value: number): number {
  let h = value >>> 0
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
  return (h ^ (h >>> 16)) >>> 0
}
