/**
 * Browsers have no AsyncLocalStorage (yet: TC39 AsyncContext). A page hosts
 * replicas without an HTTP server, so calls pass their signal and deadline
 * explicitly; this stand-in keeps the context only for synchronous code.
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
