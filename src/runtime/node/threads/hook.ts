/**
 * What `serve()` needs to know inside a replica's worker thread: there it
 * must not listen. The worker imports the user's module, which may itself
 * call `serve(app, { threads: { module: import.meta.url } })` at top level;
 * that call hands its app to the worker (which finds its deployment in it)
 * and never settles, so nothing after it runs in the worker.
 */
import { isMainThread, workerData } from 'node:worker_threads'
import type { Deployment } from '../../../deployment/deployment.js'

export interface CapturedServe {
  app: { routes: readonly { handler: unknown }[] }
  deployments: readonly Deployment[]
  env: Record<string, unknown>
}

let listener: ((captured: CapturedServe) => void) | undefined
const captured: CapturedServe[] = []

/** True inside a worker thread that hosts an edgeserve replica. */
export function inReplicaThread(): boolean {
  return !isMainThread && (workerData as { edgeserveReplicaThread?: unknown } | null)?.edgeserveReplicaThread === true
}

/** serve() in a replica thread: give the app to the worker, never settle. */
export function captureServe(
  app: CapturedServe['app'],
  options: { deployments?: readonly Deployment[] | undefined; env?: Record<string, unknown> | undefined },
): Promise<never> {
  const call = { app, deployments: options.deployments ?? [], env: { ...options.env } }
  if (listener) listener(call)
  else captured.push(call)
  return new Promise<never>(() => undefined)
}

/** The worker's side: called for every serve() made while its module loads. */
export function onServeCaptured(callback: (captured: CapturedServe) => void): void {
  listener = callback
  for (const call of captured.splice(0)) callback(call)
}
