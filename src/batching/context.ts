import { host } from '#batching-host'
import type { ContextStorage } from './host.js'
import type { CancelSignal } from './cancel-signal.js'
import type { CallContext } from './options.js'

/**
 * What the runtime knows about the request a batched call is made for: its
 * origin, its client-disconnect signal, its deadline and multiplexed model.
 *
 * A call like `await this.handleBatch(x)` inside a deployment's `fetch()`
 * passes no options, yet a disconnected client must still take it out of
 * the queue. So the replica runs the user's method inside the request's
 * context, and the queue reads it on every call that does not say
 * otherwise.
 *
 * On Node and on Workers (workerd with `nodejs_compat`) the context is kept
 * in AsyncLocalStorage, which the runtime's host module gives (host.ts): it
 * follows the method through every `await`, into nested async functions,
 * timers and promise callbacks.
 *
 * In browsers there is no AsyncLocalStorage (host/browser.ts):
 * the context follows the method only while it runs synchronously, up to
 * its first `await`. A batched call made there (`return
 * this.handleBatch(parse(request))`) still inherits it; a call made after an
 * await does not, and passes what it needs itself:
 * `this.handleBatch(x, { signal, deadline })` (see `CallOptions`).
 */
export interface AmbientContext extends CallContext {
  signal?: CancelSignal | undefined
  deadline?: number | undefined
}

/** The request a replica is serving, as its batched calls and handle calls inherit it. */
export interface RequestContext extends AmbientContext {
  /** 'batch': the code of a batch of one multiplexed model's calls, which belongs to no single request. */
  origin: 'http' | 'handle' | 'batch'
}

/** Where the context of the request whose code is running is kept. */
export const requestContext: ContextStorage<AmbientContext> = host.contextStorage<AmbientContext>()

/** The context of the request whose code is running, if any. */
export function currentContext(): AmbientContext | undefined {
  return requestContext.getStore()
}

/** Run `fn(arg)` with `context` as the ambient one, through its awaits where the runtime can. */
export function runWithContext<A, R>(context: AmbientContext, fn: (arg: A) => R, arg: A): R {
  return requestContext.run(context, fn, arg)
}
