import type { Http2Bindings, HttpBindings } from '@hono/node-server'
import { RequestCancelledError } from '../../errors.js'
import { disconnectSignal } from '../../http/http-call.js'

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

    /** Aborts when the response's stream closes before the response was sent: the client went away. */
    [disconnectSignal](): AbortSignal {
      const controller = new AbortController()
      const outgoing: { closed: boolean; writableFinished: boolean; once(event: 'close', listener: () => void): unknown } = this.outgoing
      const hungUp = () => {
        if (!outgoing.writableFinished) controller.abort(new RequestCancelledError('the client disconnected'))
      }
      if (outgoing.closed) hungUp()
      else outgoing.once('close', hungUp)
      return controller.signal
    }
  }
  Object.setPrototypeOf(RequestEnv.prototype, shared)
  return RequestEnv as RequestEnvClass
}
