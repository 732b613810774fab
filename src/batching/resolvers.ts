/** A promise and the functions that settle it, as `Promise.withResolvers()` returns them. */
export interface Resolvers<T> {
  promise: Promise<T>
  resolve: (value: T) => void
  reject: (reason: Error) => void
}

/**
 * `Promise.withResolvers()`, which Node 22, workerd and current browsers
 * have, and the ES2023 library this package compiles against does not
 * declare.
 *
 * Use it for a promise that one request awaits and another settles on
 * Workers: a request waiting in the router for a replica slot, or for an
 * answer another request's call brings back. Made with `new Promise(executor)`
 * instead, once V8 has optimized the code around it, workerd continues the
 * awaiting code in the request that settled the promise, and its next I/O
 * fails with "Cannot perform I/O on behalf of a different request".
 */
export function withResolvers<T>(): Resolvers<T> {
  return (Promise as unknown as { withResolvers<T>(): Resolvers<T> }).withResolvers<T>()
}
