import type { CancelSignal } from '../batching/cancel-signal.js'
import type { ReplicaCall } from '../deployment/endpoint.js'

/**
 * Where a runtime can learn of a client's disconnect more cheaply than from
 * `request.signal`, it puts a function under this key in the env the app
 * receives. On Node, reading `request.signal` makes @hono/node-server build
 * a whole undici Request (body stream, headers, an AbortController) for
 * every request; `serve()` offers the response socket's `close` instead.
 */
export const disconnectSignal: unique symbol = Symbol('edgeserve.disconnectSignal')

/** What a runtime puts under `disconnectSignal`: called as a method of the env, once per request at most. */
export type DisconnectSource = (this: object) => CancelSignal

/**
 * Likewise for reading one request header: on Node, `request.headers` makes
 * @hono/node-server build a web Headers object from the whole request,
 * where the header Node parsed is one property away.
 */
export const headerSource: unique symbol = Symbol('edgeserve.headerSource')

/** What a runtime puts under `headerSource`: the header's value (lower-case `name`), or null without one. */
export type HeaderSource = (this: object, name: string) => string | null

/** The request header `name` (lower case), read the cheapest way the runtime offers. */
export function requestHeader(request: Request, env: unknown, name: string): string | null {
  if (env !== null && typeof env === 'object') {
    const source = (env as { [headerSource]?: unknown })[headerSource]
    if (typeof source === 'function') return (source as HeaderSource).call(env, name)
  }
  return request.headers.get(name)
}

/**
 * One HTTP request on its way to a replica. Its disconnect signal is made
 * the first time something listens (a call waiting for a replica or in a
 * batch queue); a request that goes straight through never makes one.
 */
export class HttpCall implements ReplicaCall {
  #signal: CancelSignal | undefined

  constructor(
    private readonly request: Request,
    private readonly env: unknown,
    readonly deadline: number | undefined,
    readonly multiplexedModelId: string | undefined,
  ) {}

  get signal(): CancelSignal {
    return (this.#signal ??= this.#makeSignal())
  }

  #makeSignal(): CancelSignal {
    const env = this.env
    if (env !== null && typeof env === 'object') {
      const source = (env as { [disconnectSignal]?: unknown })[disconnectSignal]
      if (typeof source === 'function') return (source as DisconnectSource).call(env)
    }
    return this.request.signal
  }
}
