import { DurableObject } from 'cloudflare:workers'
import type { Deployment } from '../../deployment/deployment.js'
import type { ReplicaDescription, ReplicaHealth } from '../../deployment/endpoint.js'
import type { Outcome } from '../../deployment/outcome.js'
import { Replica } from '../../deployment/replica.js'
import { registerBindingAdapter } from '../../deployment/replica-set.js'
import { encodeStream, isAsyncIterable } from '../../deployment/stream-codec.js'
import type { MetricsSnapshot } from '../../metrics/registry.js'
import { durableObjectReplicas } from './durable-object-replica.js'

/**
 * The Durable Object that hosts one replica. `durableObject(deployment)`
 * gives a subclass bound to that deployment; wrangler binds the subclass.
 * Its RPC methods are what `DurableObjectReplica` calls.
 */
export class ReplicaObject extends DurableObject<unknown> {
  /** Set on each subclass by durableObject(). */
  static readonly deployment: Deployment | undefined = undefined
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

/**
 * The Durable Object class that hosts the replicas of `deployment`:
 *
 * ```ts
 * export const BatchAdder = durableObject(adder)   // wrangler.toml: class_name = "BatchAdder"
 * ```
 *
 * One object per replica (`idFromName("<name>/<i>")`), so concurrent requests
 * from every Worker isolate meet in one place and batch together. The user's
 * instance is created on the first request, not in the constructor: Workers
 * cap start-up at one second, and a model load would count against it.
 */
export function durableObject(deployment: Deployment): typeof ReplicaObject {
  // The Worker that exports this class routes to it through the same env binding.
  registerBindingAdapter(durableObjectReplicas)
  return class extends ReplicaObject {
    static override readonly deployment = deployment
  }
}
