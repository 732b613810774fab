import type { CancelSignal } from '../batching/cancel-signal.js'

/**
 * What a runtime adapter may put in the env an app receives, for the
 * ingress to read once per request where it can do so more cheaply than
 * through the web `Request`.
 *
 * On Node, reading `request.signal` or `request.headers` makes
 * @hono/node-server build a whole web Request (body stream, headers, an
 * AbortController) for every request, where Node has already parsed the
 * header and the response socket says when the client goes away. `serve()`
 * offers those instead.
 */
export const disconnectSignal: unique symbol = Symbol('edgeserve.disconnectSignal')

/** What a runtime puts under `disconnectSignal`: called as a method of the env, once per request at most. */
export type DisconnectSource = (this: object) => CancelSignal

export const headerSource: unique symbol = Symbol('edgeserve.headerSource')

/** What a runtime puts under `headerSource`: the header's value (lower-case `name`), or null without one. */
export type HeaderSource = (this: object, name: string) => string | null

/** What the ingress reads of an env: the two offers above, each optional. */
export interface RuntimeEnv {
  [disconnectSignal]?: DisconnectSource
  [headerSource]?: HeaderSource
}
