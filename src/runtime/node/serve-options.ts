/**
 * serve()'s options, checked before anything starts: a wrong one is refused
 * with what to pass, rather than failing later with Node's words for it (or
 * after the port is taken and the app registered).
 */
import { formatReceived } from '../../batching/options.js'
import { checkDeploymentList } from '../../deployment/deployment.js'

/** The options checked here, as a caller from JavaScript may really pass them. */
interface UncheckedServeOptions {
  port?: unknown
  hostname?: unknown
  name?: unknown
  deployments?: unknown
  env?: unknown
  rpcToken?: unknown
  handleSignals?: unknown
  shutdownTimeoutS?: unknown
  threads?: unknown
}

export function checkServeOptions(options: UncheckedServeOptions): void {
  const { port, hostname, name, deployments, env, rpcToken, handleSignals, shutdownTimeoutS, threads } = options
  if (typeof port === 'string') {
    // process.env.PORT passed as it is, from JavaScript.
    throw new TypeError(`port must be a number from 0 to 65535, received the string ${JSON.stringify(port)}: pass Number(${JSON.stringify(port)})`)
  }
  if (port !== undefined && (typeof port !== 'number' || !Number.isInteger(port) || port < 0 || port > 65535)) {
    throw new RangeError(`port must be an integer from 0 to 65535, received ${formatReceived(port)}`)
  }
  if (hostname !== undefined && (typeof hostname !== 'string' || hostname === '')) {
    throw new TypeError(
      `hostname must be the address to listen on, such as '127.0.0.1' (this machine only) or '0.0.0.0' (every interface), received ${formatReceived(hostname)}`,
    )
  }
  if (name !== undefined && (typeof name !== 'string' || name === '')) {
    throw new TypeError(`name must be a non-empty string, the app's name for getDeploymentHandle(deployment, { app: name }), received ${formatReceived(name)}`)
  }
  checkDeploymentList(deployments, 'deployments')
  if (env !== undefined && (typeof env !== 'object' || env === null || Array.isArray(env))) {
    throw new TypeError(`env must be an object of bindings, such as { GREETING: 'hello' }, received ${formatReceived(env)}`)
  }
  // An empty token keeps the route off, as an unset EDGESERVE_RPC_TOKEN does.
  if (rpcToken !== undefined && typeof rpcToken !== 'string') {
    throw new TypeError(`rpcToken must be a string, the token remote handles send (leave it out to keep the route off), received ${formatReceived(rpcToken)}`)
  }
  if (handleSignals !== undefined && typeof handleSignals !== 'boolean') {
    throw new TypeError(`handleSignals must be true or false, received ${formatReceived(handleSignals)}`)
  }
  if (shutdownTimeoutS !== undefined && (typeof shutdownTimeoutS !== 'number' || !(shutdownTimeoutS >= 0) || !Number.isFinite(shutdownTimeoutS))) {
    throw new RangeError(`shutdownTimeoutS must be a number of seconds, 0 or more, received ${formatReceived(shutdownTimeoutS)}`)
  }
  // false, like undefined, keeps every replica in this thread.
  if (threads !== undefined && threads !== false) checkThreads(threads)
}

function checkThreads(threads: unknown): void {
  const usage = 'threads must be { module: import.meta.url }, naming the module that exports the app (each thread imports it)'
  if (typeof threads !== 'object' || threads === null || Array.isArray(threads)) throw new TypeError(`${usage}, received ${formatReceived(threads)}`)
  const { module, deployments } = threads as { module?: unknown; deployments?: unknown }
  if (!(typeof module === 'string' && module !== '') && !(module instanceof URL)) {
    throw new TypeError(`${usage}; its module is ${formatReceived(module)}`)
  }
  if (deployments !== undefined && !(Array.isArray(deployments) && deployments.every((each) => typeof each === 'string'))) {
    throw new TypeError(`threads.deployments must be an array of deployment names, such as ['Classifier'], received ${formatReceived(deployments)}`)
  }
}
