import { runWithContext, type AmbientContext } from '../batching/context.js'

/**
 * The request a replica is serving, as its batched calls and handle calls
 * inherit it: see `AmbientContext` for how far it follows the method's code.
 */
export interface RequestContext extends AmbientContext {
  /** 'batch': the code of a batch of one multiplexed model's calls, which belongs to no single request. */
  origin: 'http' | 'handle' | 'batch'
}

/** Run the user's method for one request or call with `context` as its ambient context. */
export async function runInContext<R>(context: RequestContext, fn: () => R | Promise<R>): Promise<R> {
  return runWithContext(context, fn, undefined)
}
