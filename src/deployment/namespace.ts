import { HTTPError } from '../errors.js'
import type { Deployment } from './deployment.js'
import type { Outcome } from './outcome.js'
import type { CallMeta } from './replica.js'
import { Router } from './router.js'

/**
 * A replica as seen from the router: on Workers a Durable Object stub, on
 * Node an in-process object with the same two doors.
 */
export interface ReplicaStub {
  fetch(request: Request): Promise<Response>
  /** Handle calls (Workers RPC on a Durable Object). */
  invoke(method: string, args: unknown[], meta?: CallMeta): Promise<Outcome>
}

/** The shape of a `DurableObjectNamespace` that the router needs. */
export interface ReplicaNamespace {
  idFromName(name: string): unknown
  get(id: never): unknown
}

/** A deployment's replicas in one namespace, and the router in front of them. */
export interface Replicas {
  router: Router
  stub(replica: number): ReplicaStub
  /** Forget a stub that broke (an evicted Durable Object): the next call makes a fresh one. */
  renew(replica: number): void
}

const cache = new WeakMap<object, Map<string, Replicas>>()

export function replicaName(deployment: Deployment, replica: number): string {
  return `${deployment.name}/${replica}`
}

/**
 * The replicas of `deployment` in `env`, found by its binding name. One
 * router per namespace object per deployment, kept for the isolate's life.
 */
export function replicasIn(env: unknown, deployment: Deployment): Replicas {
  const namespace = findNamespace(env, deployment)
  let byName = cache.get(namespace)
  if (!byName) cache.set(namespace, (byName = new Map()))
  let replicas = byName.get(deployment.name)
  if (!replicas) {
    const stubs: (ReplicaStub | undefined)[] = []
    const make = (i: number) => namespace.get(namespace.idFromName(replicaName(deployment, i)) as never) as ReplicaStub
    replicas = {
      router: new Router(deployment.options),
      stub: (i) => (stubs[i] ??= make(i)),
      renew: (i) => {
        stubs[i] = undefined
      },
    }
    byName.set(deployment.name, replicas)
  }
  return replicas
}

function findNamespace(env: unknown, deployment: Deployment): ReplicaNamespace {
  const { binding } = deployment.options
  const namespace = env && typeof env === 'object' ? (env as Record<string, unknown>)[binding] : undefined
  if (namespace && typeof (namespace as ReplicaNamespace).idFromName === 'function') return namespace as ReplicaNamespace
  throw new HTTPError(
    500,
    `no replicas found for deployment ${deployment.name}: env.${binding} is missing. ` +
      `On Workers, add to wrangler.toml:\n` +
      `[[durable_objects.bindings]]\nname = "${binding}"\nclass_name = "${binding}"\n` +
      `[[migrations]]\ntag = "v1"\nnew_sqlite_classes = ["${binding}"]\n` +
      `and export const ${binding} = durableObject(${deployment.name}) from the Worker. ` +
      `On Node, serve the app with serve() from edgeserve/node.`,
  )
}
