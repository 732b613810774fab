import type { Deployment } from '../../deployment/deployment.js'
import { replicaName, type ReplicaNamespace } from '../../deployment/namespace.js'
import { ADMIN_PREFIX, handleAdmin, routesOf, type AdminReplica, type AdminSource } from '../../http/admin.js'
import { deploymentsOf } from '../../http/ingress.js'
import type { MetricsSnapshot } from '../../metrics/registry.js'
import type { ReplicaDescription, ReplicaHealth } from '../../deployment/replica.js'
import { watchBody } from './unread-body.js'

interface AppLike {
  fetch(request: Request, env?: unknown, ctx?: unknown): Response | Promise<Response>
  routes: readonly { method: string; path: string; handler: unknown }[]
}

interface ReplicaRpc {
  metrics(): Promise<MetricsSnapshot>
  health(): Promise<ReplicaHealth>
  describe(): Promise<ReplicaDescription>
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
  const deployments = deploymentsOf(app)
  for (const extra of options.deployments ?? []) deployments.set(extra.name, extra)
  return {
    async fetch(request: Request, env: Record<string, unknown>, ctx: unknown): Promise<Response> {
      // An answer must not leave the body unread: see unread-body.ts.
      const watched = watchBody(request)
      const answer = await answerRequest(watched.request, env, ctx)
      await watched.settle(answer)
      return answer
    },
  }

  async function answerRequest(request: Request, env: Record<string, unknown>, ctx: unknown): Promise<Response> {
    if (new URL(request.url).pathname.startsWith(ADMIN_PREFIX)) {
      const answer = await handleAdmin(request, adminSource(app, [...deployments.values()], env))
      if (answer) return answer
    }
    return app.fetch(request, env, ctx)
  }
}

function adminSource(app: AppLike, deployments: Deployment[], env: Record<string, unknown>): AdminSource {
  return {
    replicas: () =>
      deployments.flatMap((deployment) => {
        const namespace = env[deployment.options.binding] as ReplicaNamespace | undefined
        if (!namespace) return []
        return Array.from({ length: deployment.options.numReplicas }, (_, i): AdminReplica => {
          const stub = () => namespace.get(namespace.idFromName(replicaName(deployment, i)) as never) as ReplicaRpc
          return {
            metrics: () => stub().metrics(),
            health: () =>
              stub()
                .health()
                .catch((error: unknown) => ({ deployment: deployment.name, replica: i, healthy: false, message: String(error) })),
            describe: () => stub().describe(),
          }
        })
      }),
    routes: () => routesOf(app),
    deployments: () => deployments,
  }
}
