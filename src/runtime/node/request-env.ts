import type { Http2Bindings, HttpBindings } from '@hono/node-server'
import type { CancelSignal } from '../../batching/cancel-signal.js'
import { RequestCancelledError } from '../../errors.js'
import { disconnectSignal, headerSource } from '../../http/http-call.js'

type NodeBindings = HttpBindings | Http2Bindings
type Listener = EventListenerObject | (() => void)

/**
 * The env an app sees for one request on Node: the app's shared bindings
 * (replica sets, `serve({ env })`) through the prototype rather than copied
 * per request, the `incoming`/`outgoing` objects @hono/node-server passes
 * (Hono's `getConnInfo` reads them), and a client-disconnect signal that is
 * only made when something listens for it.
 */
export type RequestEnvClass = new (node: NodeBindings) => NodeBindings

export function requestEnvClass(shared: Record<string, unknown>): RequestEnvClass {
  class RequestEnv {
    readonly incoming: NodeBindings['incoming']
    readonly outgoing: NodeBindings['outgoing']

    constructor(node: NodeBindings) {
      this.incoming = node.incoming
      this.outgoing = node.outgoing
    }

    [disconnectSignal](): CancelSignal {
      return new ClientDisconnect(this.outgoing)
    }

    [headerSource](name: string): string | null {
      const value = this.incoming.headers[name]
      return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value
    }
  }
  Object.setPrototypeOf(RequestEnv.prototype, shared)
  // Its instances hold the one pair @hono/node-server gave, which the union type cannot say.
  return RequestEnv as RequestEnvClass
}

/**
 * Fires when the response's stream closes before the response was sent: the
 * client went away. A CancelSignal rather than an AbortSignal: Node 20
 * takes about 5 µs to make an AbortController, more than the rest of a
 * batched request costs, and a request that waits in a queue needs one.
 */
class ClientDisconnect implements CancelSignal {
  aborted = false
  reason: unknown = undefined
  #listeners: Listener[] = []

  constructor(outgoing: { closed: boolean; writableFinished: boolean; once(event: 'close', listener: () => void): unknown }) {
    const hungUp = () => {
      if (!outgoing.writableFinished) this.#abort(new RequestCancelledError('the client disconnected'))
    }
    if (outgoing.closed) hungUp()
    else outgoing.once('close', hungUp)
  }

  addEventListener(_type: 'abort', listener: Listener): void {
    if (!this.aborted) this.#listeners.push(listener)
  }

  removeEventListener(_type: 'abort', listener: Listener): void {
    const at = this.#listeners.indexOf(listener)
    if (at >= 0) this.#listeners.splice(at, 1)
  }

  #abort(reason: Error): void {
    this.aborted = true
    this.reason = reason
    const listeners = this.#listeners
    this.#listeners = []
    const event = new Event('abort')
    for (const listener of listeners) {
      if (typeof listener === 'function') listener()
      else listener.handleEvent(event)
    }
  }
}
