/**
 * The HTTP/1.1 server `serve()` listens with: @hono/node-server's adaptor,
 * which reads request bodies and discards those an app left whole and
 * unread, plus the three things it lacks, each with its reason below.
 */
import { createAdaptorServer, type Http2Bindings, type HttpBindings } from '@hono/node-server'
import { IncomingMessage, ServerResponse, type Server, type ServerOptions } from 'node:http'
import { answerClientErrors } from './client-errors.js'
import { settleUnreadBody } from './connections.js'
import { closeIdleConnectionsAfterReading } from './idle-connections.js'

export interface HttpServerOptions {
  fetch(request: Request, bindings: HttpBindings): Promise<Response>
  port: number
  hostname: string
  /** node:http's own options: `headersTimeout`, `requestTimeout`, `maxHeaderSize` and so on. */
  serverOptions?: ServerOptions
}

/** Listen on `hostname:port`; resolves once listening, rejects if the port cannot be had. */
export function listenHttp(options: HttpServerOptions): Promise<Server> {
  const fetch = async (request: Request, bindings: HttpBindings | Http2Bindings): Promise<Response> => {
    const { incoming, outgoing } = bindings
    if (!(incoming instanceof IncomingMessage && outgoing instanceof ServerResponse)) throw new TypeError('listenHttp serves HTTP/1.1 only')
    try {
      return await options.fetch(request, { incoming, outgoing })
    } finally {
      // The adaptor drains a body still arriving for 500 ms, then resets the connection, and never says Connection: close.
      settleUnreadBody(incoming, outgoing)
    }
  }
  // hostname also stands in for a request without a Host header.
  const server = createAdaptorServer({ fetch, hostname: options.hostname, serverOptions: options.serverOptions ?? {} }) as Server
  // The adaptor leaves the requests Node's parser refuses to Node, which answers them without a JSON error.
  answerClientErrors(server, { maxHeaderSize: options.serverOptions?.maxHeaderSize })
  // Node's keep-alive timer can close a connection with a request sent while a handler held the thread.
  closeIdleConnectionsAfterReading(server)
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.hostname, () => {
      server.off('error', reject)
      resolve(server)
    })
  })
}
