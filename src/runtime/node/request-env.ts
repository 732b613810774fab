import type { Http2Bindings, HttpBindings } from '@hono/node-server'
import { CancelSource, type CancelSignal } from '../../batching/cancel-signal.js'
import { RequestCancelledError } from '../../errors.js'
import { disconnectSignal, headerSource } from '../../http/http-call.js'

type NodeBindings = HttpBindings | Http2Bindings

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

/** Fires when the response's stream closes before the response was sent: the client went away. */
class ClientDisconnect extends CancelSource {
  constructor(outgoing: { closed: boolean; writableFinished: boolean; once(event: 'close', listener: () => void): unknown }) {
    super()
    const hungUp = () => {
      if (!outgoing.writableFinished) this.cancel(new RequestCancelledError('the client disconnected'))
    }
    if (outgoing.closed) hungUp()
    else outgoing.once('close', hungUp)
  }
}
