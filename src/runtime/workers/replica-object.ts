import { DurableObject, type DurableObjectState } from 'cloudflare:workers'
import type { Deployment } from '../../deployment/deployment.js'
import type { ReplicaDescription, ReplicaHealth } from '../../deployment/endpoint.js'
import type { Outcome } from '../../deployment/outcome.js'
import { Replica } from '../../deployment/replica.js'
import { encodeStream, isAsyncIterable } from '../../deployment/stream-codec.js'
import { MODEL_ID_HEADER } from '../../deployment/model-id.js'
import { answerBadJsonWith400 } from '../../deployment/body/json-or-400.js'
import { hasSmallBody, readIfUnread } from './unread-body.js'
import { replicaIndexOf, replicaName } from '../../deployment/replica-set.js'
import { sampleIntervalMs } from '../../deployment/autoscaling-policy.js'
import type { MetricsSnapshot } from '../../metrics/registry.js'
import { stubOf } from './durable-object-replica.js'
import { coordinatorName, ScaleCoordinator, type CoordinatorStatus, type ScaleReport } from './coordinator.js'
import type { CarriedAnswer, CarriedItem, ClaimedAnswer } from './carried.js'
import { CarriedItems } from './carried-items.js'

/**
 * The Durable Object that hosts one replica. `durableObject(deployment)`
 * gives a subclass bound to that deployment; wrangler binds the subclass.
 * Its RPC methods are what `DurableObjectReplica` calls.
 *
 * Not part of the package's declarations: its base class comes from
 * `cloudflare:workers`, whose types a user's project need not have.
 * durable-object.ts describes it to users by its shape.
 */
export class ReplicaObject extends DurableObject<unknown> {
  /** Set on each subclass by durableObject(). */
  static readonly deployment: Deployment | undefined = undefined
  // Public, as users see it (ReplicaDurableObject): a subclass that adds RPC
  // methods reaches its state the Cloudflare way, as `this.ctx`. Types only.
  declare readonly ctx: DurableObjectState
  declare readonly env: unknown
  #replica: Replica | undefined
  #coordinator: ScaleCoordinator | undefined
  /** Requests and calls inside this object now. */
  #ongoing = 0
  /** Autoscaling took this replica out of service: it stops whenever it holds nothing. */
  #retired = false
  /**
   * The coordinator counts this replica as started and waits to hear that it
   * stopped: from its retirement until the stop is reported. The coordinator's
   * starts and stops must pair up, so this, not whether an instance happens to
   * exist, decides whether a start is a new one.
   */
  #stopOwed = false
  /** The next load report, pending; and when the last went. */
  #reportTimer: ReturnType<typeof setTimeout> | undefined
  #reportedAt = -Infinity
  readonly #carried = new CarriedItems()

  #deployment(): Deployment {
    const { deployment } = this.constructor as typeof ReplicaObject
    if (!deployment) throw new TypeError('export durableObject(yourDeployment) from the Worker, not ReplicaObject itself')
    return deployment
  }

  #host(): Replica {
    if (!this.#replica) {
      const deployment = this.#deployment()
      // The router names each replica's object "<deployment>/<i>" (replicaName()); an id not made from a name has
      // none, and serves as replica 0.
      const name = this.ctx.id.name
      this.#replica = new Replica(deployment, name === undefined ? 0 : replicaIndexOf(deployment, name), this.env)
    }
    return this.#replica
  }

  override async fetch(request: Request): Promise<Response> {
    this.#arrived()
    this.#host().callArrived(1)
    if (request.method !== 'GET' && request.method !== 'HEAD') answerBadJsonWith400(request)
    try {
      // The Worker's ingress checked the header before routing here by it. The request's signal aborts
      // when its client goes away, with the enable_request_signal flag (else it never does): a call
      // still queued then leaves the batch queue instead of running for nobody.
      return await this.#host().fetch(request, { multiplexedModelId: request.headers.get(MODEL_ID_HEADER) ?? undefined, signal: request.signal })
    } finally {
      // A small body comes as the client sent it, pumped by the Worker: an answer that left it
      // unread would break that pump and the client's connection (see unread-body.ts).
      if (hasSmallBody(request)) await readIfUnread(request)
      this.#answered()
    }
  }

  /** Handle calls (Workers RPC). Signals cannot cross RPC; the deadline and the model id do. */
  async invoke(method: string, args: unknown[], call?: { deadline?: number; multiplexedModelId?: string }): Promise<Outcome> {
    this.#arrived()
    this.#host().callArrived(1)
    try {
      const outcome = await this.#host().invoke(method, args, { deadline: call?.deadline, multiplexedModelId: call?.multiplexedModelId })
      // An iterator cannot cross RPC; a byte stream can.
      if (outcome.ok && 'value' in outcome && isAsyncIterable(outcome.value)) return { ok: true, stream: encodeStream(outcome.value) }
      return outcome
    } finally {
      this.#answered()
    }
  }

  /**
   * Requests and handle calls a Worker isolate gathered into one call (see
   * gathered-calls.ts): each goes into the replica as though it had come
   * alone, and gets its own answer, in order.
   */
  async carry(items: CarriedItem[]): Promise<CarriedAnswer[]> {
    const replica = this.#host()
    replica.callArrived(items.length)
    return this.#carried.carry(replica, items, this.#track)
  }

  /** Count one carried item among the requests inside this object while it runs. */
  readonly #track = <T>(work: Promise<T>): Promise<T> => {
    this.#arrived()
    return work.finally(() => this.#answered())
  }

  /** Carried items whose callers left after their call went: they leave the batch queue. */
  async dropCarried(tokens: string[]): Promise<void> {
    // A call like any other, billed as one: it carries no item.
    this.#host().callArrived(0)
    this.#carried.drop(tokens)
  }

  /** A carried item's streamed answer, claimed by the request it belongs to. */
  async claim(token: string): Promise<ClaimedAnswer> {
    // A call like any other, billed as one: it carries no new item, only an answer back.
    this.#host().callArrived(0)
    return this.#carried.claim(token)
  }

  async metrics(): Promise<MetricsSnapshot> {
    return this.#host().metrics()
  }

  async health(): Promise<ReplicaHealth> {
    return this.#host().health()
  }

  async describe(): Promise<ReplicaDescription> {
    return this.#host().describe()
  }

  // --- autoscaling: the replica's side -------------------------------------

  /**
   * The coordinator brings this replica into service: true if this is a new
   * start, false if its retirement's stop was never reported (it was still
   * finishing its requests), so that the coordinator still counts it started.
   * Whether an instance exists says nothing here: a straggler (a request from
   * an isolate that had not yet learned the new count) makes a fresh instance
   * in a replica whose stop was already counted.
   */
  async start(): Promise<boolean> {
    const continued = this.#stopOwed
    this.#retired = false
    this.#stopOwed = false
    this.#host().instance()
    return !continued
  }

  /** The coordinator took this replica out of service: answer what it holds, then stop. */
  async retire(): Promise<void> {
    this.#retired = true
    this.#stopOwed = true
    if (this.#ongoing === 0) await this.#stop()
  }

  /**
   * A retired replica stops whenever it is idle: once it has answered what
   * it held, and again after a straggler, a request from an isolate that had
   * not yet learned the new count (answered by a fresh instance, not lost).
   */
  #answered(): void {
    this.#ongoing--
    this.#reportLoad()
    if (this.#ongoing === 0 && this.#retired) void this.#stop().catch(() => undefined) // still owed: reported when next idle
  }

  #arrived(): void {
    this.#ongoing++
    this.#reportLoad()
  }

  /**
   * Tell the coordinator this replica's ongoing requests: soon after a
   * change, at most once per sample interval, always the latest count (the
   * last report holds until the next, so the final 0 must go out too).
   */
  #reportLoad(): void {
    const { autoscaling } = this.#deployment().options
    if (!autoscaling || this.#reportTimer !== undefined) return
    const intervalMs = sampleIntervalMs(autoscaling)
    this.#reportTimer = setTimeout(
      () => {
        this.#reportTimer = undefined
        this.#reportedAt = Date.now()
        const deployment = this.#deployment()
        void stubOf(this.env, deployment, coordinatorName(deployment))
          ?.replicaLoad(this.#host().index, this.#ongoing)
          .catch(() => undefined) // the next change reports again
      },
      Math.max(0, this.#reportedAt + intervalMs - Date.now()),
    )
  }

  async #stop(): Promise<void> {
    await this.#host().stop()
    // Reported once per retirement, and not at all when a start took the replica back meanwhile.
    if (!this.#retired || !this.#stopOwed) return
    this.#stopOwed = false
    try {
      await stubOf(this.env, this.#deployment(), coordinatorName(this.#deployment()))?.replicaStopped(this.#host().index)
    } catch (error) {
      this.#stopOwed = true
      throw error
    }
  }

  // --- autoscaling: the coordinator's side (the object "<deployment>/autoscaler") --

  #coordinate(): ScaleCoordinator {
    if (!this.#coordinator) {
      const deployment = this.#deployment()
      if (!deployment.options.autoscaling) throw new TypeError(`deployment ${deployment.name} does not autoscale`)
      const replica = (index: number) => {
        const stub = stubOf(this.env, deployment, replicaName(deployment, index))
        if (!stub) throw new TypeError(`env.${deployment.options.binding} is not this deployment's Durable Object namespace`)
        return stub
      }
      this.#coordinator = new ScaleCoordinator(deployment, this.ctx.storage, replica)
    }
    return this.#coordinator
  }

  async scaleReport(report: ScaleReport): Promise<number> {
    return this.#coordinate().report(report)
  }

  async scaleStatus(): Promise<CoordinatorStatus> {
    return this.#coordinate().status()
  }

  async replicaLoad(replica: number, ongoing: number): Promise<void> {
    await this.#coordinate().load(replica, ongoing)
  }

  async replicaStopped(replica: number): Promise<void> {
    this.#coordinate().stopped(replica)
  }

  /** The coordinator's sampling alarm. */
  async alarm(): Promise<void> {
    if (this.#deployment().options.autoscaling) await this.#coordinate().tick()
  }
}
