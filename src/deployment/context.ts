import { AsyncLocalStorage } from '#async-context'
import { setContextProvider, type AmbientContext } from '../batching/context.js'

/**
 * The request a replica is serving, carried across awaits with
 * AsyncLocalStorage (Node, and workerd with `nodejs_compat`). The batch queue
 * reads it, so `await this.handleBatch(x)` inside `fetch()` inherits the
 * client's disconnect signal, the request deadline and the call's origin.
 */
export interface RequestContext extends AmbientContext {
  origin: 'http' | 'handle'
}

const storage = new AsyncLocalStorage<RequestContext>()
setContextProvider(() => storage.getStore())

export function runInContext<R>(context: RequestContext, fn: () => R): R {
  return storage.run(context, fn)
}

/** The request being served, inside a replica; undefined elsewhere. */
export function currentRequest(): RequestContext | undefined {
  return storage.getStore()
}
