/** edgeserve on Node: serve a Hono app with its deployments in this process. */
export { serve, type RunningServer, type ServableApp, type ServeOptions } from './serve.js'
export { getDeploymentHandle } from './handle.js'
export type { ThreadsOption } from './threads/thread-replica.js'
export { setLogLevel, type LogLevel } from '../../metrics/log.js'
