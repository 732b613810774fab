import { HTTPError } from '../errors.js'
import type { Deployment } from './deployment.js'
import type { ReplicaEndpoint } from './endpoint.js'
import { Router } from './router.js'
import { FixedScaling, type ReplicaScaling } from './scaling.js'

/**
 * A deployment's replicas, the router that spreads requests over them, and
 * who keeps their count (fixed, or an autoscaler: see scaling.ts).
 */
export class ReplicaSet {
  readonly router: Router
  readonly scaling: ReplicaScaling

  constructor(
    readonly deployment: Deployment,
    readonly replicas: readonly ReplicaEndpoint[],
    scaling?: (router: Router) => ReplicaScaling,
  ) {
    this.router = new Router(deployment.options)
    this.scaling = scaling ? scaling(this.router) : new FixedScaling(deployment, this.router)
  }

  /** The replicas running now: the ones the admin routes ask for metrics, health and methods. */
  async running(): Promise<ReplicaEndpoint[]> {
    return (await this.scaling.running()).map((replica) => this.replicas[replica]!)
  }
}

/**
 * A deployment's replicas as seen through one endpoint that routes for them
 * (a replica thread's view of its server): this side admits every call and
 * leaves the deployment's limits to the router behind the endpoint.
 */
export function relayedReplicaSet(deployment: Deployment, endpoint: ReplicaEndpoint): ReplicaSet {
  const options = { ...deployment.options, numReplicas: 1, autoscaling: undefined, maxOngoingRequests: Infinity, maxQueuedRequests: Infinity }
  const relayed = Object.create(deployment, { options: { value: options } }) as Deployment
  return new ReplicaSet(relayed, [endpoint])
}

/**
 * Turns what a runtime put in `env` under a deployment's binding into its
 * replicas, or undefined if the value is not that runtime's. The Workers
 * adapter registers one for Durable Object namespaces; on Node, `serve()`
 * puts a `ReplicaSet` in the env itself.
 */
export type BindingAdapter = (binding: unknown, deployment: Deployment) => ReplicaSet | undefined

const adapters = new Set<BindingAdapter>()

export function registerBindingAdapter(adapter: BindingAdapter): void {
  adapters.add(adapter)
}

/** The replicas of `deployment` in `env`, found by its binding name. */
export function replicaSetOf(env: unknown, deployment: Deployment): ReplicaSet {
  const set = findReplicaSet(env, deployment)
  if (set === undefined) throw missingBinding(deployment)
  return set
}

/** The replicas of `deployment` in `env`, or undefined when `env` holds none. */
export function findReplicaSet(env: unknown, deployment: Deployment): ReplicaSet | undefined {
  const binding = env && typeof env === 'object' ? (env as Record<string, unknown>)[deployment.options.binding] : undefined
  if (binding instanceof ReplicaSet) return binding
  if (binding !== undefined) {
    for (const adapt of adapters) {
      const set = adapt(binding, deployment)
      if (set) return set
    }
  }
  return undefined
}

/** A replica's name: the Durable Object name on Workers, the thread name on Node. */
export function replicaName(deployment: Deployment, replica: number): string {
  return `${deployment.name}/${replica}`
}

/** The index in a name made by replicaName(); a RangeError for any other name. */
export function replicaIndexOf(deployment: Deployment, name: string): number {
  const index = Number(name.slice(name.lastIndexOf('/') + 1))
  if (!Number.isInteger(index) || index < 0 || index >= deployment.options.numReplicas || replicaName(deployment, index) !== name) {
    throw new RangeError(`no replica ${JSON.stringify(name)} in deployment ${deployment.name}`)
  }
  return index
}

/** Deployments whose missing binding was logged: once each, not on every request. */
const reportedMissing = new WeakSet<Deployment>()

/**
 * A deployment the runtime gave no replicas: the log says how to bind them,
 * once; the client hears only that the server is not set up for it (the fix
 * names the Worker's bindings and classes, which are not the client's
 * business).
 */
function missingBinding(deployment: Deployment): HTTPError {
  const { binding } = deployment.options
  if (!reportedMissing.has(deployment)) {
    reportedMissing.add(deployment)
    const className = `${binding}Object`
    console.error(
      `edgeserve: no replicas found for deployment ${deployment.name}: env.${binding} is missing.\n` +
        `On Workers, bind it in wrangler.toml:\n\n` +
        `[[durable_objects.bindings]]\nname = "${binding}"\nclass_name = "${className}"\n\n` +
        `[[migrations]]\ntag = "v1"   # or your next migration's tag\nnew_sqlite_classes = ["${className}"]\n\n` +
        `and export the class from the Worker: export const ${className} = durableObject(<the deployment>)\n` +
        `On Node, serve the app with serve() from edgeserve/node, or edgeserve run.`,
    )
  }
  return new HTTPError(500, `deployment ${deployment.name} has no replicas on this server; its log says how to bind them`)
}
