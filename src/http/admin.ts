import type { Deployment } from '../deployment/deployment.js'
import type { ReplicaEndpoint } from '../deployment/endpoint.js'
import { replicaSetOf, type ReplicaSet } from '../deployment/replica-set.js'
import type { ResolvedDeploymentOptions } from '../deployment/options.js'
import type { MetricsSnapshot } from '../metrics/registry.js'
import { mergeSnapshots, PROMETHEUS_CONTENT_TYPE, renderPrometheus } from '../metrics/prometheus.js'
import { ingressDeployment, type IngressHandler } from './ingress.js'
import { errorResponse, HTTPError } from '../errors.js'
import { dashboardResponse, type Dashboard } from './dashboard/page.js'
import { loadedModels } from '../onnx/loaded-models.js'

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

/** Each deployment's replica set in the env the app runs with (a missing binding has none). */
function setsOf(deployments: readonly Deployment[], env: unknown): ReplicaSet[] {
  return deployments.flatMap((deployment) => {
    try {
      return [replicaSetOf(env, deployment)]
    } catch {
      return []
    }
  })
}

/** The running replicas of every deployment: a replica autoscaled away is not woken to be asked. */
async function replicasOf(sets: readonly ReplicaSet[]): Promise<ReplicaEndpoint[]> {
  return (await Promise.all(sets.map((set) => set.running()))).flat()
}

/** Every running replica's metrics and each deployment's own (replica count, starts, stops), as one snapshot. */
async function gatherMetrics(sets: readonly ReplicaSet[]): Promise<MetricsSnapshot> {
  const replicas = await replicasOf(sets)
  return mergeSnapshots([...(await Promise.all(replicas.map((r) => r.metrics()))), ...(await Promise.all(sets.map((set) => set.scaling.metrics())))])
}

/** A deployment's options as `/-/routes` shows them: JSON has no Infinity, and an autoscaled count is Ray's "auto". */
function shownOptions(options: ResolvedDeploymentOptions): Record<string, unknown> {
  const { maxQueuedRequests, autoscaling, numReplicas, batching, ...rest } = options
  return {
    ...rest,
    numReplicas: autoscaling ? 'auto' : numReplicas,
    maxQueuedRequests: maxQueuedRequests === Infinity ? 'unbounded' : maxQueuedRequests,
    batching: batching && { ...batching, maxBodyBytes: batching.maxBodyBytes === Infinity ? 'unbounded' : batching.maxBodyBytes },
    ...(autoscaling ? { autoscaling } : {}),
  }
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
  const sets = () => setsOf(deployments, site.env)
  switch (pathname) {
    case '/-/metrics': {
      const snapshot = await gatherMetrics(sets())
      return new Response(renderPrometheus(snapshot), { headers: { 'content-type': PROMETHEUS_CONTENT_TYPE } })
    }
    case '/-/metrics.json':
      return json({ time: Date.now(), metrics: await gatherMetrics(sets()) })
    case '/-/healthz': {
      const health = await Promise.all((await replicasOf(sets())).map((r) => r.health()))
      const healthy = health.every((r) => r.healthy)
      return json({ status: healthy ? 'ok' : 'unhealthy', replicas: health }, healthy ? 200 : 503)
    }
    case '/-/routes': {
      const found = sets()
      const descriptions = await Promise.all((await replicasOf(found)).map((r) => r.describe()))
      const statuses = new Map(await Promise.all(found.map(async (set) => [set.deployment.name, await set.scaling.status()] as const)))
      return json({
        routes: routesOf(app),
        deployments: deployments.map((d) => {
          // The first started replica speaks for the deployment: its replicas run the same methods.
          const described = descriptions.find((x) => x.deployment === d.name && x.started)
          return {
            name: d.name,
            options: shownOptions(d.options),
            // Replicas taking requests now (with autoscaling, the count it keeps).
            replicas: statuses.get(d.name)?.replicas ?? null,
            batchedMethods: described?.methods ?? {},
            // Methods with `adaptive`: the size allowed and the cost measured, on that replica.
            adaptive: described ? { replica: described.replica, methods: described.adaptive } : null,
          }
        }),
        // Which runtime and provider run each model: those of the server's own thread, then each replica thread's.
        models: [
          ...loadedModels().map((model) => ({ ...model, thread: 'server' })),
          ...descriptions.flatMap((d) => (d.models ?? []).map((model) => ({ ...model, thread: `${d.deployment}/${d.replica}` }))),
        ],
      })
    }
    case '/-/dashboard':
      if (site.dashboard) return dashboardResponse(site.dashboard)
      return errorResponse(new HTTPError(404, NO_DASHBOARD))
    default:
      return undefined
  }
}
