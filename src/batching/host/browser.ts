/**
 * The batching core's host in a browser, chosen by the `browser` condition
 * of package.json's `#batching-host` import (see host.ts): the clock runs
 * while code does, and timers and I/O belong to no request. But browsers
 * have no AsyncLocalStorage (TC39's AsyncContext is not shipped yet), so
 * the request context is kept only while synchronous code runs.
 *
 * What follows a replica method in a browser: the request's context (its
 * signal, deadline, multiplexed model id and origin) while the method runs
 * synchronously, up to its first `await`. A batched call made there, such
 * as `return this.handleBatch(parse(request))`, inherits it as on Node.
 *
 * What does not: anything after the first `await`. A batched call made
 * there is a plain call, with no signal and no deadline; pass them yourself,
 * `await this.handleBatch(x, { signal, deadline })`, with the signal and
 * deadline you hold (a page's AbortController, `Date.now() + ms`). A
 * multiplexed method's model id likewise: call `multiplexedModelId()` before
 * the first await and keep it.
 */
import type { BatchingHost, ContextStorage } from '../host.js'

/** AsyncLocalStorage's getStore() and run(), for the synchronous part of the code that run() runs. */
class SynchronousContext<S> implements ContextStorage<S> {
  private store: S | undefined

  getStore(): S | undefined {
    return this.store
  }

  run<A extends unknown[], R>(store: S, fn: (...args: A) => R, ...args: A): R {
    const outer = this.store
    this.store = store
    try {
      return fn(...args)
    } finally {
      this.store = outer
    }
  }
}

export const host: BatchingHost = {
  contextStorage: () => new SynchronousContext(),
  clockStandsStill: false,
  timersBelongToRequests: false,
  currentIo: () => undefined,
}
