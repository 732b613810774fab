import type { AddressInfo } from 'node:net'
import { boundDeployments, type Deployment } from '../../deployment/deployment.js'
import { callThrough, type Invoke } from '../../deployment/handle.js'
import { Replica } from '../../deployment/replica.js'
import { ReplicaSet, replicaSetOf } from '../../deployment/replica-set.js'
import { LocalAutoscaler } from '../../deployment/local-autoscaler.js'
import type { Router } from '../../deployment/router.js'
import { deploymentsOf } from '../../http/ingress.js'
import { RPC_PREFIX, handleRpc } from '../../http/rpc.js'
import { ADMIN_PREFIX, handleAdmin } from '../../http/admin.js'
import { setLogLevel, type LogLevel } from '../../metrics/log.js'
import { captureServe, inReplicaThread } from './threads/hook.js'
import { ThreadReplica, threadReplicas, type ThreadsOption } from './threads/thread-replica.js'
import { DEFAULT_APP, findApp, registerApp, unregisterApp, type HostedApp } from './registry.js'
import { listenHttp } from './http-server.js'
import { checkServeOptions } from './serve-options.js'
import type { Dashboard } from '../../http/dashboard/page.js'
import { dashboardFor } from './dashboard.js'

/** What serve() needs of a Hono app: its fetch and its routes. */
export interface ServableApp {
  fetch(request: Request, env?: unknown): Response | Promise<Response>
  routes: readonly { method: string; path: string; handler: unknown }[]
}

export interface ServeOptions {
  /** Default 8000. 0 picks a free port (see `server.port`). */
  port?: number | undefined
  /** Default 127.0.0.1: only this machine can connect unless you say otherwise. */
  hostname?: string | undefined
  /** The app's name for `getDeploymentHandle(name, { app })`. Default "default". */
  name?: string | undefined
  /**
   * Deployments reached only through handles made with `getHandle()`. Routed
   * ones are found in the app, and so are those bound to them with `.bind()`
   * (model composition); a listed one replaces a found one of the same name.
   */
  deployments?: Deployment[] | undefined
  /** Bindings the app and the replicas see in `env`, like wrangler's `[vars]`. */
  env?: Record<string, unknown> | undefined
  /** Enables the remote-handle route (`edgeserve/client`). Default: `EDGESERVE_RPC_TOKEN`, else off. */
  rpcToken?: string | undefined
  /** Drain and exit 0 on SIGINT/SIGTERM. Default true. */
  handleSignals?: boolean | undefined
  /** Longest wait for in-flight requests when draining. Default 30. */
  shutdownTimeoutS?: number | undefined
  /**
   * Run each replica on its own worker thread, so `numReplicas` CPU-bound
   * replicas use that many cores: `threads: { module: import.meta.url }`,
   * naming the module that exports the app or calls serve() with it (the
   * worker imports it to find the deployment class). Optionally
   * `deployments: ['Name']` to move only some. See `ThreadsOption`.
   * Thread replicas see the structured-cloneable part of `env` only.
   */
  threads?: ThreadsOption | undefined
  /** 'debug' logs one JSON line per batch. Default: EDGESERVE_LOG_LEVEL, else 'info'. */
  logLevel?: LogLevel | undefined
  /** The page for `/-/dashboard`: `false` serves none (404). Default: the built-in one from `edgeserve/dashboard`. */
  dashboard?: Dashboard | false | undefined
}

export interface RunningServer {
  readonly url: string
  readonly port: number
  readonly hostname: string
  readonly app: HostedApp
  /** Stop accepting, answer what is in flight, then close: resolves once the port, the app's name and its replica threads are free. */
  close(): Promise<void>
}

/**
 * Serve a Hono app on Node, hosting every deployment it routes to (and any in
 * `options.deployments`) in this process.
 *
 * ```ts
 * import { serve } from 'edgeserve/node'
 * await serve(app, { port: 8000 })
 * ```
 */
export async function serve(app: ServableApp, options: ServeOptions = {}): Promise<RunningServer> {
  // Inside a replica's thread: hand the app to the worker, do not listen.
  if (inReplicaThread()) return captureServe(app, options)
  checkServeOptions(options)
  const hostname = options.hostname ?? '127.0.0.1'
  const port = options.port ?? 8000
  const rpcToken = options.rpcToken ?? process.env.EDGESERVE_RPC_TOKEN
  const dashboard = await dashboardFor(options.dashboard)
  if (options.logLevel !== undefined) setLogLevel(options.logLevel)
  const { hosted, threads, startNow, autoscalers } = hostDeployments(app, options)
  const stopHosting = async () => {
    for (const autoscaler of autoscalers) autoscaler.close()
    await Promise.all(threads.map((replica) => replica.terminate()))
  }
  try {
    registerApp(hosted)
  } catch (error) {
    await stopHosting()
    throw error
  }
  // serve() could not finish (a replica's thread failed to start, the port
  // is taken): nothing it set up may outlive it, so that the caller can
  // serve again, or the process can exit.
  const abandon = async (error: unknown): Promise<never> => {
    unregisterApp(hosted.name)
    await stopHosting()
    throw error
  }
  await Promise.all(startNow.map((replica) => replica.start())).catch(abandon)
  const admin = { app, deployments: [...hosted.deployments.values()], env: hosted.env, dashboard }
  // The routes under /-/ (health, metrics, the dashboard, remote handles) come before the app's.
  const adminRoutes = async (request: Request): Promise<Response | undefined> => {
    if (rpcToken && new URL(request.url).pathname.startsWith(RPC_PREFIX)) return handleRpc(request, rpcToken, findCaller)
    return handleAdmin(request, admin)
  }
  const http = await listenHttp({
    fetch: app.fetch.bind(app),
    env: hosted.env,
    before: { prefix: ADMIN_PREFIX, fetch: adminRoutes },
    port,
    hostname,
  }).catch(abandon)
  const { server } = http
  const address = server.address() as AddressInfo
  const shownHost = hostname.includes(':') ? `[${hostname}]` : hostname

  let closing: Promise<void> | undefined
  // Resolves once nothing of the app is left: the listener and its sockets, the app's name (so that it can be
  // served again at once) and its replica threads.
  const close = () =>
    (closing ??= (async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeIdleConnections()
      let timer: ReturnType<typeof setTimeout> | undefined
      const timedOut = new Promise<void>((resolve) => (timer = setTimeout(resolve, (options.shutdownTimeoutS ?? 30) * 1000)))
      // Let the last responses flush before the sockets go.
      await Promise.race([http.drain().then(() => new Promise<void>((resolve) => setImmediate(resolve))), timedOut])
      clearTimeout(timer)
      server.closeAllConnections()
      unregisterApp(hosted.name)
      process.off('SIGINT', onSignal)
      process.off('SIGTERM', onSignal)
      await Promise.all([closed, stopHosting()])
    })())
  const onSignal = (signal: NodeJS.Signals) => {
    console.log(`edgeserve: ${signal} received, answering ${http.inFlight} in-flight request(s) before exit`)
    void close().then(() => process.exit(0))
  }
  if (options.handleSignals ?? true) {
    process.once('SIGINT', onSignal)
    process.once('SIGTERM', onSignal)
  }

  return {
    url: `http://${shownHost}:${address.port}`,
    port: address.port,
    hostname,
    app: hosted,
    close,
  }
}

interface Hosting {
  hosted: HostedApp
  /** Every thread replica, to terminate at close. */
  threads: ThreadReplica[]
  /** The thread replicas that run from the start (an autoscaled deployment's initialReplicas), started before listening. */
  startNow: ThreadReplica[]
  autoscalers: LocalAutoscaler[]
}

/**
 * The deployments `app` routes to (and `options.deployments`), each as a
 * ReplicaSet in the app's env under its binding: replicas in this process,
 * or on worker threads for the deployments `options.threads` names. An
 * autoscaled deployment gets a replica per `maxReplicas` and an autoscaler
 * that decides how many of them run.
 */
function hostDeployments(app: ServableApp, options: ServeOptions): Hosting {
  const deployments = deploymentsOf(app)
  // Listed ones win over found ones of the same name, with whatever they are bound to.
  for (const extra of options.deployments ?? []) for (const each of [extra, ...boundDeployments(extra)]) deployments.set(each.name, each)
  const env: Record<string, unknown> = { ...options.env }
  const hosting: Hosting = { hosted: { name: options.name ?? DEFAULT_APP, deployments, env }, threads: [], startNow: [], autoscalers: [] }
  const { threads: threadsOption } = options
  const unknown = threadsOption?.deployments?.filter((name) => !deployments.has(name)) ?? []
  if (unknown.length > 0) {
    throw new RangeError(
      `threads.deployments names ${unknown.map((name) => JSON.stringify(name)).join(', ')}, which this app does not serve ` +
        `(it serves: ${[...deployments.keys()].map((name) => JSON.stringify(name)).join(', ') || 'nothing'})`,
    )
  }
  // What a replica thread can call through handles: every deployment hosted here, as a handle made here would.
  const server = {
    bindings: [...deployments.values()].map((deployment) => deployment.options.binding),
    call: (binding: string) => {
      const replicas = env[binding]
      return replicas instanceof ReplicaSet ? callThrough(() => replicas) : undefined
    },
  }
  for (const deployment of deployments.values()) {
    const onThread = threadsOption && (!threadsOption.deployments || threadsOption.deployments.includes(deployment.name))
    const { autoscaling } = deployment.options
    let replicas: readonly (Replica | ThreadReplica)[]
    if (onThread) {
      const onThreads = threadReplicas(deployment, threadsOption, options.env, server)
      hosting.threads.push(...onThreads)
      hosting.startNow.push(...onThreads.slice(0, autoscaling ? autoscaling.initialReplicas : onThreads.length))
      replicas = onThreads
    } else {
      replicas = Array.from({ length: deployment.options.numReplicas }, (_, i) => new Replica(deployment, i, env))
    }
    const scaled = autoscaling
      ? (router: Router) => {
          const autoscaler = new LocalAutoscaler(deployment, router, replicas)
          hosting.autoscalers.push(autoscaler)
          return autoscaler
        }
      : undefined
    env[deployment.options.binding] = new ReplicaSet(deployment, replicas, scaled)
  }
  return hosting
}

/** The remote-handle route's lookup: how to call deployment `name` of app `appName`, if it is served here. */
function findCaller(appName: string, name: string): Invoke | undefined {
  const app = findApp(appName)
  const deployment = app?.deployments.get(name)
  return app && deployment ? callThrough(() => replicaSetOf(app.env, deployment)) : undefined
}
