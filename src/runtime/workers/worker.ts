import { checkKnownOptions, formatReceived } from '../../batching/options.js'
import { boundDeployments, checkDeploymentList, type Deployment } from '../../deployment/deployment.js'
import { registerBindingAdapter } from '../../deployment/replica-set.js'
import { ADMIN_PREFIX, handleAdmin } from '../../http/admin.js'
import { checkDashboard, type Dashboard } from '../../http/dashboard/page.js'
import { deploymentsOf } from '../../http/ingress.js'
import { durableObjectReplicas } from './durable-object-replica.js'
import { hasSmallBody, watchBody } from './unread-body.js'

interface AppLike {
  fetch(request: Request, env?: unknown, ctx?: unknown): Response | Promise<Response>
  routes: readonly { method: string; path: string; handler: unknown }[]
}

export interface ServeWorkerOptions {
  /**
   * Deployments reached only through handles made with `getHandle()`. Routed
   * ones are found in the app, and so are those bound to them with `.bind()`
   * (model composition); a listed one replaces a found one of the same name.
   */
  deployments?: Deployment[] | undefined
  /** The page for `/-/dashboard`, from `edgeserve/dashboard`. Left out, that route answers 404 and the page is not bundled. */
  dashboard?: Dashboard | undefined
}

/**
 * The Worker's default export: what Cloudflare's types call an
 * `ExportedHandler<Env>` (`serveWorker(app) satisfies ExportedHandler<Env>`
 * checks), declared here by its shape so that the package's types need no
 * `@cloudflare/workers-types`.
 */
export interface WorkerHandler {
  fetch(request: Request, env: unknown, ctx: unknown): Promise<Response>
}

function checkWorkerOptions(options: unknown): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TypeError(`serveWorker()'s options must be an object like { dashboard }, received ${formatReceived(options)}`)
  }
  checkKnownOptions('serveWorker()', options, ['deployments', 'dashboard'])
  checkDeploymentList((options as { deployments?: unknown }).deployments, 'serveWorker: options.deployments')
}

const WORKER_DASHBOARD_OPTION =
  "serveWorker: options.dashboard must be the page from 'edgeserve/dashboard' (import { dashboard } from 'edgeserve/dashboard'; serveWorker(app, { dashboard })), or left out to serve none"

/**
 * The Worker's default export: the app, plus the operational routes
 * (`/-/metrics`, `/-/healthz`, `/-/routes`), which gather from every
 * replica's Durable Object over RPC, and `/-/dashboard` when given the page.
 *
 * ```ts
 * import { dashboard } from 'edgeserve/dashboard' // optional: without it the page is not bundled
 * export default serveWorker(app, { dashboard })
 * export const BatchAdder = durableObject(adder)
 * ```
 */
export function serveWorker(app: AppLike, options: ServeWorkerOptions = {}): WorkerHandler {
  checkWorkerOptions(options)
  registerBindingAdapter(durableObjectReplicas)
  const found = deploymentsOf(app)
  for (const extra of options.deployments ?? []) for (const each of [extra, ...boundDeployments(extra)]) found.set(each.name, each)
  const deployments = [...found.values()]
  const dashboard = options.dashboard === undefined ? undefined : checkDashboard(options.dashboard, WORKER_DASHBOARD_OPTION)
  return {
    async fetch(request: Request, env: unknown, ctx: unknown): Promise<Response> {
      // A request without a body, or with a small one, goes to the app as it came (a Durable Object
      // reads what its app left of a small one); any other body is watched, so that no answer leaves
      // it unread (see unread-body.ts).
      if (hasNoBody(request) || hasSmallBody(request)) return answerRequest(request, env, ctx)
      const watched = watchBody(request)
      const answer = await answerRequest(watched.request, env, ctx)
      await watched.readRestAfter(answer)
      return answer
    },
  }

  async function answerRequest(request: Request, env: unknown, ctx: unknown): Promise<Response> {
    if (pathStartsWith(request.url, ADMIN_PREFIX)) {
      const answer = await handleAdmin(request, { app, deployments, env, dashboard })
      if (answer) return answer
    }
    return app.fetch(request, env, ctx)
  }
}

/**
 * A GET or HEAD without a body: most requests, told by the cheapest checks.
 * perf: in a profile of the bench's bare route on workerd (c=64), asking
 * the headers for a Content-Length (hasSmallBody) and watching a body that
 * was not there took 5% of the Worker's time; this check takes 1%.
 */
function hasNoBody(request: Request): boolean {
  return (request.method === 'GET' || request.method === 'HEAD') && request.body === null
}

/**
 * Whether the path of an absolute URL starts with `prefix`, without parsing
 * it: a URL object made for every request, to find the few operational
 * ones, took 3% of the bare route's time in the same profile.
 */
export function pathStartsWith(url: string, prefix: string): boolean {
  const path = url.indexOf('/', url.indexOf('//') + 2)
  return path >= 0 && url.startsWith(prefix, path)
}
