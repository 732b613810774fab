/**
 * What a runtime adapter may put in the env an app receives, for the
 * ingress to use once per request where it can do better than the web
 * `Request`.
 *
 * On Node, reading `request.signal` or `request.headers` makes
 * @hono/node-server build a whole web Request (body stream, headers, an
 * AbortController) for every request, where Node has already parsed the
 * header and the socket says when the client goes away. `serve()` offers
 * those instead.
 */

/** What a request's scope is to the runtime: something to cancel. */
export interface CancelTarget {
  cancel(reason: Error): void
}

/** A method of the env: cancel `scope` if the client goes away before its answer is sent. */
export const watchDisconnect: unique symbol = Symbol('edgeserve.watchDisconnect')

/** A method of the env: the header's value (lower-case `name`), or null without one. */
export const headerSource: unique symbol = Symbol('edgeserve.headerSource')

/** What the ingress reads of an env: the two offers above, each optional. */
export interface RuntimeEnv {
  [watchDisconnect]?: (scope: CancelTarget) => void
  [headerSource]?: (name: string) => string | null
}
