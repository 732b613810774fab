/**
 * Browsers have no AsyncLocalStorage (TC39's AsyncContext is not shipped
 * yet), so this stand-in keeps a context only while synchronous code runs.
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
export class AsyncLocalStorage<T> {
  private store: T | undefined

  getStore(): T | undefined {
    return this.store
  }

  run<R, A extends unknown[]>(store: T, fn: (...args: A) => R, ...args: A): R {
    const outer = this.store
    this.store = store
    try {
      return fn(...args)
    } finally {
      this.store = outer
    }
  }
}
