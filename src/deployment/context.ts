import { AsyncLocalStorage } from '#async-context'
import { setContextProvider, type AmbientContext } from '../batching/context.js'

/**
 * The request a replica is serving. The batch queue reads it, so that
 * `await this.handleBatch(x)` inside `fetch()` inherits the client's
 * disconnect signal, the request deadline and the call's origin without the
 * user passing them.
 *
 * How it follows the user's code, cheapest first:
 *
 * - While the user's method runs synchronously (up to its first `await`),
 *   the context is a plain variable. A batched call made there, the common
 *   `return this.handleBatch(parse(request))`, finds it at no cost.
 * - A batched call made after an `await` (`const body = await readBody(r);
 *   await this.classify(body)`) finds no variable set. The first time that
 *   happens while a request is in flight, tracking switches to
 *   AsyncLocalStorage for the rest of the process's life. On Node 20,
 *   AsyncLocalStorage installs promise hooks that slow every promise in the
 *   process (a no-op batched route served half the requests a second with
 *   it), so it is only paid for by apps that need it. The call that revealed
 *   the need gets the context too when it is the only request in flight.
 */
export interface RequestContext extends AmbientContext {
  origin: 'http' | 'handle'
}

/** The request whose code runs synchronously right now. */
let running: RequestContext | undefined
/** Created when a batched call is first seen after an await; from then on every request is tracked across awaits. */
let storage: AsyncLocalStorage<RequestContext> | undefined
/** Requests inside user code now. */
const inFlight = new Set<RequestContext>()

setContextProvider(() => running ?? storage?.getStore() ?? missed())

function missed(): RequestContext | undefined {
  if (inFlight.size === 0 || storage) return undefined
  storage = new AsyncLocalStorage<RequestContext>()
  // With one request in flight, the call can only be that request's.
  return inFlight.size === 1 ? inFlight.values().next().value : undefined
}

/** Run the user's method for one request or call with `context` as its ambient context. */
export async function runInContext<R>(context: RequestContext, fn: () => R | Promise<R>): Promise<R> {
  inFlight.add(context)
  const outer = running
  running = context
  let result: R | Promise<R>
  try {
    result = storage ? storage.run(context, fn) : fn()
  } finally {
    running = outer
  }
  try {
    return await result
  } finally {
    inFlight.delete(context)
  }
}

/** The request being served, inside a replica whose class has batched methods; undefined elsewhere. */
export function currentRequest(): RequestContext | undefined {
  return running ?? storage?.getStore()
}

/** How request context follows user code in this process: see RequestContext. */
export function contextTracking(): 'synchronous' | 'async-local-storage' {
  return storage ? 'async-local-storage' : 'synchronous'
}
