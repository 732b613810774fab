/** edgeserve on Node: serve a Hono app with its deployments in this process. */
export { serve, type RunningServer, type ServableApp, type ServeOptions } from './serve.js'
export { getDeploymentHandle } from './handle.js'
export { LocalNamespace } from './local-namespace.js'
export { ThreadNamespace, type ThreadsOption } from './threads/namespace.js'
export { setLogLevel, type LogLevel } from '../../metrics/log.js'
