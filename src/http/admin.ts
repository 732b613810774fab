import type { Deployment } from '../deployment/deployment.js'
import type { ReplicaEndpoint } from '../deployment/endpoint.js'
import { replicaSetOf } from '../deployment/replica-set.js'
import { mergeSnapshots, PROMETHEUS_CONTENT_TYPE, renderPrometheus } from '../metrics/prometheus.js'
import { ingressDeployment, type IngressHandler } from './ingress.js'
import { errorResponse } from '../deployment/responses.js'
import { HTTPError } from '../errors.js'
import { dashboardResponse, type Dashboard } from './dashboard/page.js'

export interface RouteInfo {
  method: string
  path: string
  deployment: string
}

interface AppRoutes {
  routes: readonly { method: string; path: string; handler: unknown }[]
}

/** What the operational routes report on: the same shape on every runtime. */
export interface AdminSite {
  app: AppRoutes
  deployments: readonly Deployment[]
  /** The env the app runs with: where each deployment's replicas are found. */
  env: unknown
  /** The page for `/-/dashboard`; without one that route answers 404. */
  dashboard: Dashboard | undefined
}

const NO_DASHBOARD =
  "this app does not serve the dashboard: on Workers, pass it in with serveWorker(app, { dashboard }) and import { dashboard } from 'edgeserve/dashboard'; on Node, serve() serves it unless given dashboard: false"

export const ADMIN_PREFIX = '/-/'

/** Routes of the app that forward to a deployment (found by their ingress marker). */
export function routesOf(app: AppRoutes): RouteInfo[] {
  const found: RouteInfo[] = []
  for (const route of app.routes) {
    const deployment = (route.handler as Partial<IngressHandler>)[ingressDeployment]
    if (deployment) found.push({ method: route.method, path: route.path, deployment: deployment.name })
  }
  return found
}

/** Every replica of every deployment, from the env the app runs with (a missing binding has none). */
function replicasOf(deployments: readonly Deployment[], env: unknown): ReplicaEndpoint[] {
  return deployments.flatMap((deployment) => {
    try {
      return [...replicaSetOf(env, deployment).replicas]
    } catch {
      return []
    }
  })
}

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body, null, 2), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
  })

/**
 * The operational routes, the same on every runtime:
 * `/-/metrics` (Prometheus), `/-/metrics.json`, `/-/healthz`, `/-/routes`,
 * and `/-/dashboard` when the site has a page for it. Replicas answer in
 * process, over a worker thread's port, or over Durable Object RPC.
 * Returns undefined for requests that are not theirs.
 */
export async function handleAdmin(request: Request, site: AdminSite): Promise<Response | undefined> {
  const { pathname } = new URL(request.url)
  if (!pathname.startsWith(ADMIN_PREFIX) || (request.method !== 'GET' && request.method !== 'HEAD')) return undefined
  const { app, deployments } = site
  const replicas = () => replicasOf(deployments, site.env)
  switch (pathname) {
    case '/-/metrics': {
      const snapshot = mergeSnapshots(await Promise.all(replicas().map((r) => r.metrics())))
      return new Response(renderPrometheus(snapshot), { headers: { 'content-type': PROMETHEUS_CONTENT_TYPE } })
    }
    case '/-/metrics.json': {
      const snapshot = mergeSnapshots(await Promise.all(replicas().map((r) => r.metrics())))
      return json({ time: Date.now(), metrics: snapshot })
    }
    case '/-/healthz': {
      const health = await Promise.all(replicas().map((r) => r.health()))
      const healthy = health.every((r) => r.healthy)
      return json({ status: healthy ? 'ok' : 'unhealthy', replicas: health }, healthy ? 200 : 503)
    }
    case '/-/routes': {
      const descriptions = await Promise.all(replicas().map((r) => r.describe()))
      return json({
        routes: routesOf(app),
        deployments: deployments.map((d) => ({
          name: d.name,
          // JSON has no Infinity; say it in words.
          options: { ...d.options, maxQueuedRequests: d.options.maxQueuedRequests === Infinity ? 'unbounded' : d.options.maxQueuedRequests },
          batchedMethods: descriptions.find((x) => x.deployment === d.name && x.started)?.methods ?? {},
        })),
      })
    }
    case '/-/dashboard':
      if (site.dashboard) return dashboardResponse(site.dashboard)
      return errorResponse(new HTTPError(404, NO_DASHBOARD))
    default:
      return undefined
  }
}
