import type { Context } from 'hono'
import { boundDeployments, checkDeployment, type Deployment } from '../deployment/deployment.js'
import { ReplicaSet, replicaSetOf } from '../deployment/replica-set.js'
import { route } from '../deployment/router.js'
import { errorResponse } from '../errors.js'
import { checkModelId, MODEL_ID_HEADER } from '../deployment/model-id.js'
import { deadlineFrom, RequestScope } from '../deployment/request-scope.js'
import { headerSource, watchDisconnect, type RuntimeEnv } from './runtime-env.js'

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
 * Retry-After when the deployment is at capacity or a replica is overloaded,
 * 504 past `requestTimeoutS`).
 *
 * The ingress makes the request's one `RequestScope` (its disconnect signal,
 * deadline, model id and origin) and routes the request with it as handles
 * route their calls (`route()`): the router waits with it, the replica runs
 * the user's method in it.
 */
export function ingress(deployment: Deployment): IngressHandler {
  checkDeployment(deployment, 'ingress')
  const { requestTimeoutS, binding } = deployment.options
  const handler = async (c: Context): Promise<Response> => {
    try {
      const env = c.env as (RuntimeEnv & Record<string, unknown>) | undefined
      // On Node, serve() puts the replica set itself in the env; a Durable Object namespace needs adapting.
      const set = env?.[binding]
      const replicas = set instanceof ReplicaSet ? set : replicaSetOf(env, deployment)
      // The runtime's own header read and disconnect watch where it offers them (see runtime-env.ts), else the request's.
      const readHeader = env?.[headerSource]
      const modelId = readHeader !== undefined ? readHeader.call(env, MODEL_ID_HEADER) : c.req.raw.headers.get(MODEL_ID_HEADER)
      const watch = env?.[watchDisconnect]
      const scope = new RequestScope({
        origin: 'http',
        deadline: deadlineFrom(requestTimeoutS),
        multiplexedModelId: modelId === null ? undefined : checkModelId(modelId, `the ${MODEL_ID_HEADER} header`),
        callerSignal: watch !== undefined ? undefined : c.req.raw.signal,
      })
      watch?.call(env, scope)
      return await route(replicas, scope, c.req.raw)
    } catch (error) {
      return errorResponse(error)
    }
  }
  return Object.assign(handler, { [ingressDeployment]: deployment })
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
