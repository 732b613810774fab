import { checkDeployment, type Deployment } from '../../deployment/deployment.js'
import { registerBindingAdapter } from '../../deployment/replica-set.js'
import { durableObjectReplicas, type ReplicaStub } from './durable-object-replica.js'
import { ReplicaObject } from './replica-object.js'
import type { CoordinatorStorage } from './coordinator.js'

/**
 * What a replica's Durable Object reads of the state workerd gives it: its
 * id's name (`"<deployment>/<replica>"`). Cloudflare's `DurableObjectState`
 * has this shape; it is spelled out here so that the package's types need
 * neither `@cloudflare/workers-types` nor the `cloudflare:workers` module.
 */
export interface ReplicaObjectState {
  readonly id: { readonly name?: string | undefined; toString(): string }
  abort(reason?: string): void
  blockConcurrencyWhile<T>(callback: () => Promise<T>): Promise<T>
  /** An autoscaled deployment's coordinator object keeps its count here and samples on alarms. */
  readonly storage: CoordinatorStorage
}

/**
 * One replica's Durable Object: `fetch` for HTTP, and the Workers RPC methods
 * the Worker's router calls. A subclass may add RPC methods of its own
 * (`class Model extends durableObject(model) { ... }`) and reach its state as
 * `this.ctx`, as in any Durable Object. The requests and handle calls a
 * Worker isolate gathers into one call arrive through `carry()`, not
 * `fetch()` or `invoke()` (see the deployment option `coalesceCalls`).
 */
export interface ReplicaDurableObject extends ReplicaStub {
  readonly ctx: ReplicaObjectState
  readonly env: unknown
}

/** The class `durableObject()` returns, for wrangler to bind (export it under the binding's `class_name`). */
export interface ReplicaDurableObjectClass {
  new (ctx: ReplicaObjectState, env: unknown): ReplicaDurableObject
  /** The deployment whose replicas this class hosts. */
  readonly deployment: Deployment
}

/**
 * The Durable Object class that hosts the replicas of `deployment`:
 *
 * ```ts
 * export const BatchAdderObject = durableObject(adder)   // wrangler.toml: class_name = "BatchAdderObject"
 * ```
 *
 * One object per replica (`idFromName("<name>/<i>")`), so concurrent requests
 * from every Worker isolate meet in one place and batch together. The user's
 * instance is created on the first request, not in the constructor: Workers
 * cap start-up at one second, and a model load would count against it.
 */
export function durableObject(deployment: Deployment): ReplicaDurableObjectClass {
  checkDeployment(deployment, 'durableObject')
  // The Worker that exports this class routes to it through the same env binding.
  registerBindingAdapter(durableObjectReplicas)
  return class extends ReplicaObject {
    static override readonly deployment = deployment
  }
}
