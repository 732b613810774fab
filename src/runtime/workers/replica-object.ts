import { DurableObject, type DurableObjectState } from 'cloudflare:workers'
import type { Deployment } from '../../deployment/deployment.js'
import type { ReplicaDescription, ReplicaHealth } from '../../deployment/endpoint.js'
import type { Outcome } from '../../deployment/outcome.js'
import { Replica } from '../../deployment/replica.js'
import { encodeStream, isAsyncIterable } from '../../deployment/stream-codec.js'
import type { MetricsSnapshot } from '../../metrics/registry.js'

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

  #host(): Replica {
    if (!this.#replica) {
      const { deployment } = this.constructor as typeof ReplicaObject
      if (!deployment) throw new TypeError('export durableObject(yourDeployment) from the Worker, not ReplicaObject itself')
      const name = this.ctx.id.name ?? ''
      const index = Number(name.slice(name.lastIndexOf('/') + 1))
      this.#replica = new Replica(deployment, Number.isInteger(index) ? index : 0, this.env)
    }
    return this.#replica
  }

  override async fetch(request: Request): Promise<Response> {
    return this.#host().fetch(request, {})
  }

  /** Handle calls (Workers RPC). Signals cannot cross RPC; the deadline does. */
  async invoke(method: string, args: unknown[], call?: { deadline?: number }): Promise<Outcome> {
    const outcome = await this.#host().invoke(method, args, { deadline: call?.deadline })
    // An iterator cannot cross RPC; a byte stream can.
    if (outcome.ok && 'value' in outcome && isAsyncIterable(outcome.value)) return { ok: true, stream: encodeStream(outcome.value) }
    return outcome
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
}
