import { HTTPError, ReplicaUnavailableError } from '../errors.js'
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
  /** True for in-process replicas: they share this isolate, signals and all. */
  readonly local?: boolean
}

/** A deployment's replicas in one namespace, and the router in front of them. */
export interface Replicas {
  router: Router
  stub(replica: number): ReplicaStub
}

const cache = new WeakMap<object, Map<string, Replicas>>()

export function replicaName(deployment: Deployment, replica: number): string {
  return `${deployment.name}/${replica}`
}

/** The index in a replica name made by replicaName(); a RangeError for any other id. */
export function replicaIndexOf(deployment: Deployment, id: string): number {
  const index = Number(id.slice(id.lastIndexOf('/') + 1))
  if (!Number.isInteger(index) || index < 0 || index >= deployment.options.numReplicas || replicaName(deployment, index) !== id) {
    throw new RangeError(`no replica ${JSON.stringify(id)} in deployment ${deployment.name}`)
  }
  return index
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
    const stubs: ReplicaStub[] = []
    const make = (i: number) => {
      const raw = () => namespace.get(namespace.idFromName(replicaName(deployment, i)) as never) as ReplicaStub
      return namespace.local ? raw() : new RemoteStub(raw, deployment.name)
    }
    replicas = { router: new Router(deployment.options), stub: (i) => (stubs[i] ??= make(i)) }
    byName.set(deployment.name, replicas)
  }
  return replicas
}

/**
 * Durable Object stubs for one replica, robust to the object being reset.
 *
 * Each call takes a fresh stub: a stub is an I/O object tied to the request
 * that made it (workerd refuses its use from another request), and a stub
 * whose object was reset keeps failing anyway. The call that saw a reset is
 * retried once when that is safe (GET, HEAD, or a handle call marked
 * idempotent); any other gets a 503 that says what happened, rather than
 * running twice or hanging.
 */
class RemoteStub implements ReplicaStub {
  constructor(
    private readonly fresh: () => ReplicaStub,
    private readonly deployment: string,
  ) {}

  fetch(request: Request): Promise<Response> {
    const idempotent = request.method === 'GET' || request.method === 'HEAD'
    return this.withRetry(idempotent, `${request.method} request`, (stub) => stub.fetch(request))
  }

  invoke(method: string, args: unknown[], meta: CallMeta = {}): Promise<Outcome> {
    // Signals cannot cross RPC; the deadline can.
    const remoteMeta = { deadline: meta.deadline }
    return this.withRetry(meta.idempotent === true, `call of ${method}()`, (stub) => stub.invoke(method, args, remoteMeta))
  }

  private async withRetry<R>(idempotent: boolean, what: string, call: (stub: ReplicaStub) => Promise<R>): Promise<R> {
    try {
      return await call(this.fresh())
    } catch (error) {
      if (!isReset(error)) throw error
      if (!idempotent) {
        throw new ReplicaUnavailableError(
          `a replica of ${this.deployment} was reset while serving this ${what}; it was not retried because it is not idempotent`,
          { cause: error },
        )
      }
      try {
        return await call(this.fresh())
      } catch (retryError) {
        if (!isReset(retryError)) throw retryError
        throw new ReplicaUnavailableError(`a replica of ${this.deployment} was reset twice while serving this ${what}`, {
          cause: retryError,
        })
      }
    }
  }
}

/** Errors that mean "the object went away", as workerd marks them. */
function isReset(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false
  const marks = error as { durableObjectReset?: boolean; retryable?: boolean; message?: unknown }
  return marks.durableObjectReset === true || marks.retryable === true || /Network connection lost/i.test(String(marks.message))
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
