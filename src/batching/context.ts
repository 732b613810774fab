import type { CancelSignal } from './cancel-signal.js'
import type { CallContext } from './options.js'

/**
 * Ambient call context: what the runtime knows about the request a call is
 * made for (origin, client-disconnect signal, deadline).
 *
 * Calls like `await this.handleBatch(x)` inside a deployment's `fetch()` pass
 * no options, yet a disconnected client must still leave the queue and a
 * request timeout must still bound the wait. The deployment layer installs a
 * provider (AsyncLocalStorage where the runtime has it) and the queue reads it
 * on every call that does not say otherwise. The core itself stays free of
 * runtime imports, so it also runs in a browser.
 */
export interface AmbientContext extends CallContext {
  signal?: CancelSignal | undefined
  deadline?: number
}

/**
 * The installed provider, undefined until one is: the batch queue reads this
 * binding itself and calls it only when it is set, so a call made where no
 * runtime installed one (a plain script, the engine bench) costs one compare,
 * not two checked calls (`currentContext()` and the provider).
 */
export let contextProvider: (() => AmbientContext | undefined) | undefined = undefined

export function setContextProvider(next: () => AmbientContext | undefined): void {
  contextProvider = next
}

/** Runs `fn(arg)` with `context` as the ambient one, through its awaits where the runtime can. */
export type ContextRunner = <A, R>(context: AmbientContext, fn: (arg: A) => R, arg: A) => R

let runner: ContextRunner = (_context, fn, arg) => fn(arg)

export function setContextRunner(next: ContextRunner): void {
  runner = next
}

/**
 * Run a batch's handler with the batch's own context: a batch of one model's
 * calls runs with that model id, whichever request's code started it.
 */
export function runWithContext<A, R>(context: AmbientContext, fn: (arg: A) => R, arg: A): R {
  return runner(context, fn, arg)
}

export function currentContext(): AmbientContext | undefined {
  return contextProvider === undefined ? undefined : contextProvider()
}
