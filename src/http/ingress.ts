import type { Context } from 'hono'
import type { CancelSignal } from '../batching/cancel-signal.js'
import { boundDeployments, checkDeployment, type Deployment } from '../deployment/deployment.js'
import { replicaSetOf } from '../deployment/replica-set.js'
import { errorResponse } from '../deployment/responses.js'
import { checkModelId, MODEL_ID_HEADER } from '../deployment/model-id.js'
import { deadlineFrom, RequestScope } from '../deployment/request-scope.js'
import { disconnectSignal, headerSource, type RuntimeEnv } from './runtime-env.js'

/** Marks ingress handlers, so a runtime can find the deployments an app routes to. */
export const ingressDeployment: unique symbol = Symbol('edgeserve.ingress')

export type IngressHandler = ((c: Context) => Promise<Response>) & { readonly [ingressDeployment]: Deployment }

/**
 * A Hono handler that forwards the request to a replica of `deployment`.
 *
 * ```ts
 * app.get('/adder', ingress(adder))
 * ```
 *
 * The replicas are found in `c.env` under the deployment's binding: Durable
 * Objects on Workers, in-process or thread replicas under `serve()` on Node.
 * Every failure becomes a JSON error with the right status (503 with
 * Retry-After when the deployment is at capacity, 504 past `requestTimeoutS`).
 *
 * The ingress makes the request's one `RequestScope` (its disconnect signal,
 * deadline, model id and origin) and passes it down: the router waits with
 * it, the replica runs the user's method in it.
 */
export function ingress(deployment: Deployment): IngressHandler {
  checkDeployment(deployment, 'ingress')
  const { requestTimeoutS } = deployment.options
  const handler = async (c: Context): Promise<Response> => {
    let scope: RequestScope | undefined
    try {
      const { router, replicas, scaling } = replicaSetOf(c.env, deployment)
      // Workers, autoscaled: bring this isolate's replica count up to date first.
      if (scaling.beforeRoute) await scaling.beforeRoute()
      scope = new RequestScope('http', deadlineFrom(requestTimeoutS), modelIdOf(c), () => disconnectOf(c))
      let replica = router.tryAcquire(scope.multiplexedModelId)
      if (replica < 0) replica = await router.acquire(scope.signal, scope.multiplexedModelId)
      try {
        return await replicas[replica]!.fetch(c.req.raw, scope)
      } finally {
        router.release(replica)
      }
    } catch (error) {
      return errorResponse(error)
    } finally {
      scope?.close()
    }
  }
  return Object.assign(handler, { [ingressDeployment]: deployment })
}

/** The model the request names for a multiplexed deployment, checked (a bad one is a 400); undefined without the header. */
function modelIdOf(c: Context): string | undefined {
  const env = c.env as RuntimeEnv
  const offer = env[headerSource]
  const value = offer !== undefined ? offer.call(env, MODEL_ID_HEADER) : c.req.raw.headers.get(MODEL_ID_HEADER)
  return value === null ? undefined : checkModelId(value, `the ${MODEL_ID_HEADER} header`)
}

/** The client's disconnect signal: the runtime's own where it offers one (see runtime-env.ts), else the request's. */
function disconnectOf(c: Context): CancelSignal {
  const env = c.env as RuntimeEnv
  const offer = env[disconnectSignal]
  return offer !== undefined ? offer.call(env) : c.req.raw.signal
}

/**
 * The deployments an app's routes forward to, and the ones those are bound
 * to (`ingress.bind(detector, recognizer)`: reached through handles), by name.
 */
export function deploymentsOf(app: { routes: readonly { handler: unknown }[] }): Map<string, Deployment> {
  const found = new Map<string, Deployment>()
  for (const route of app.routes) {
    const deployment = (route.handler as Partial<IngressHandler>)[ingressDeployment]
    if (!deployment) continue
    for (const each of [deployment, ...boundDeployments(deployment)]) addDeployment(found, each)
  }
  return found
}

/** Add `deployment` under its name; another class already under that name is a mistake to report. */
export function addDeployment(found: Map<string, Deployment>, deployment: Deployment): void {
  const seen = found.get(deployment.name)
  if (seen && seen.cls !== deployment.cls) {
    throw new Error(`two different deployments are both named ${deployment.name}; give one of them another name`)
  }
  found.set(deployment.name, deployment)
}
