import type { Deployment } from '../deployment/deployment.js'
import type { ReplicaDescription, ReplicaHealth } from '../deployment/replica.js'
import { mergeSnapshots, PROMETHEUS_CONTENT_TYPE, renderPrometheus } from '../metrics/prometheus.js'
import type { MetricsSnapshot } from '../metrics/registry.js'
import { HTTPError } from '../errors.js'
import { ingressDeployment, type IngressHandler } from './ingress.js'
import { errorResponse } from './responses.js'
import { dashboardResponse, type Dashboard } from './dashboard/page.js'

/** One replica as the admin routes see it: in-process on Node, a Durable Object stub on Workers. */
export interface AdminReplica {
  metrics(): Promise<MetricsSnapshot>
  health(): Promise<ReplicaHealth>
  describe(): Promise<ReplicaDescription>
}

export interface AdminSource {
  /** Every replica of every deployment the app serves. */
  replicas(): AdminReplica[]
  /** The app's routes that lead to deployments. */
  routes(): RouteInfo[]
  deployments(): Deployment[]
  /** The page for `/-/dashboard`; without one that route answers 404. */
  dashboard?: Dashboard | undefined
}

export interface RouteInfo {
  method: string
  path: string
  deployment: string
}

export const ADMIN_PREFIX = '/-/'

/** Routes of the app that forward to a deployment (found by their ingress marker). */
export function routesOf(app: { routes: readonly { method: string; path: string; handler: unknown }[] }): RouteInfo[] {
  const found: RouteInfo[] = []
  for (const route of app.routes) {
    const deployment = (route.handler as Partial<IngressHandler>)[ingressDeployment]
    if (deployment) found.push({ method: route.method, path: route.path, deployment: deployment.name })
  }
  return found
}

const NO_DASHBOARD =
  "this app does not serve the dashboard: on Workers, pass it in with serveWorker(app, { dashboard }) and import { dashboard } from 'edgeserve/dashboard'; on Node, serve() serves it unless given dashboard: false"

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body, null, 2), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
  })

/**
 * The operational routes, the same on every runtime:
 * `/-/metrics` (Prometheus), `/-/metrics.json`, `/-/healthz`, `/-/routes`, and
 * `/-/dashboard` when the source has a page for it.
 * Returns undefined for paths that are not theirs.
 */
export async function handleAdmin(request: Request, source: AdminSource): Promise<Response | undefined> {
  const { pathname } = new URL(request.url)
  if (!pathname.startsWith(ADMIN_PREFIX) || (request.method !== 'GET' && request.method !== 'HEAD')) return undefined
  // Every replica's snapshot, merged: gathered over RPC on Workers.
  const gather = async () => mergeSnapshots(await Promise.all(source.replicas().map((r) => r.metrics())))
  switch (pathname) {
    case '/-/metrics': {
      const snapshot = await gather()
      return new Response(renderPrometheus(snapshot), { headers: { 'content-type': PROMETHEUS_CONTENT_TYPE } })
    }
    case '/-/metrics.json': {
      const snapshot = await gather()
      return json({ time: Date.now(), metrics: snapshot })
    }
    case '/-/healthz': {
      const replicas = await Promise.all(source.replicas().map((r) => r.health()))
      const healthy = replicas.every((r) => r.healthy)
      return json({ status: healthy ? 'ok' : 'unhealthy', replicas }, healthy ? 200 : 503)
    }
    case '/-/routes': {
      const descriptions = await Promise.all(source.replicas().map((r) => r.describe()))
      const deployments = source.deployments().map((d) => ({
        name: d.name,
        options: d.options,
        batchedMethods: descriptions.find((x) => x.deployment === d.name && x.started)?.methods ?? {},
      }))
      return json({ routes: source.routes(), deployments })
    }
    case '/-/dashboard':
      if (source.dashboard) return dashboardResponse(source.dashboard)
      return errorResponse(new HTTPError(404, NO_DASHBOARD))
    default:
      return undefined
  }
}
