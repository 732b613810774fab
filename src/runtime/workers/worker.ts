import type { Deployment } from '../../deployment/deployment.js'
import { registerBindingAdapter } from '../../deployment/replica-set.js'
import { ADMIN_PREFIX, handleAdmin } from '../../http/admin.js'
import { deploymentsOf } from '../../http/ingress.js'
import { durableObjectReplicas } from './durable-object-replica.js'

interface AppLike {
  fetch(request: Request, env?: unknown, ctx?: unknown): Response | Promise<Response>
  routes: readonly { method: string; path: string; handler: unknown }[]
}

/**
 * The Worker's default export: the app, plus the operational routes
 * (`/-/metrics`, `/-/healthz`, `/-/routes`, `/-/dashboard`), which gather
 * from every replica's Durable Object over RPC.
 *
 * ```ts
 * export default serveWorker(app)
 * export const BatchAdder = durableObject(adder)
 * ```
 */
export function serveWorker(app: AppLike, options: { deployments?: Deployment[] } = {}) {
  registerBindingAdapter(durableObjectReplicas)
  const found = deploymentsOf(app)
  for (const extra of options.deployments ?? []) found.set(extra.name, extra)
  const deployments = [...found.values()]
  return {
    async fetch(request: Request, env: unknown, ctx: unknown): Promise<Response> {
      if (new URL(request.url).pathname.startsWith(ADMIN_PREFIX)) {
        const answer = await handleAdmin(request, app, deployments, env)
        if (answer) return answer
      }
      return app.fetch(request, env, ctx)
    },
  }
}
