import type { Http2Bindings, HttpBindings } from '@hono/node-server'
import { CancelSource, type CancelSignal } from '../../batching/cancel-signal.js'
import { RequestCancelledError } from '../../errors.js'
import { disconnectSignal, headerSource } from '../../http/runtime-env.js'
import { incomingHeader } from './incoming-header.js'

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
      return watchDisconnect(this.incoming.socket, this.outgoing)
    }

    [headerSource](name: string): string | null {
      return incomingHeader(this.incoming, name)
    }
  }
  Object.setPrototypeOf(RequestEnv.prototype, shared)
  // Its instances hold the one pair @hono/node-server gave, which the union type cannot say.
  return RequestEnv as RequestEnvClass
}

/** What a request's disconnect signal reads of its response: whether it was sent. */
interface Outgoing {
  writableFinished: boolean
}

/** Fires when the client goes away before the response was sent. */
class ClientDisconnect extends CancelSource {
  constructor(readonly outgoing: Outgoing) {
    super()
  }

  /** The connection closed: a client that had not had its answer went away. */
  connectionClosed(): void {
    if (!this.outgoing.writableFinished) this.cancel(new RequestCancelledError('the client disconnected'))
  }
}

/** Each connection's requests that listen for their client going away, by socket. */
const listening = new WeakMap<object, ClientDisconnect[]>()

interface ConnectionSocket {
  readonly destroyed: boolean
  once(event: 'close', listener: () => void): unknown
}

/**
 * A disconnect signal for a request on `socket`. The connection gets one
 * 'close' listener, for all its requests, the first time one listens: a
 * listener per request on its response cost an EventEmitter wrapper and a
 * listener list per request, and an emit when each response closed. A
 * request that was answered is dropped when the next one listens, so a
 * long kept-alive connection holds only the requests it has in flight.
 */
function watchDisconnect(socket: ConnectionSocket, outgoing: Outgoing): CancelSignal {
  const signal = new ClientDisconnect(outgoing)
  if (socket.destroyed) {
    signal.connectionClosed()
    return signal
  }
  let requests = listening.get(socket)
  if (requests === undefined) {
    const list: ClientDisconnect[] = (requests = [])
    listening.set(socket, list)
    socket.once('close', () => {
      for (const request of list) request.connectionClosed()
      list.length = 0
    })
  } else {
    for (let i = requests.length - 1; i >= 0; i--) if (requests[i]!.outgoing.writableFinished) requests.splice(i, 1)
  }
  requests.push(signal)
  return signal
}
