/**
 * Closing an idle kept-alive connection, without losing a request that came
 * while the thread was busy.
 *
 * Node's server gives a kept-alive connection `keepAliveTimeout` (plus 1 s)
 * of quiet after an answer, then destroys it. The timer runs in the event
 * loop's timers phase, which comes before the phase that reads sockets. When
 * the thread was held for longer than that (a model run, a synchronous
 * handler), the overdue timer fires before the connection's next request,
 * sent meanwhile and waiting in the kernel, is read: the connection is
 * destroyed with it unread, the kernel resets it, and the request is lost.
 *
 * With a 'timeout' listener on the server, Node leaves the decision to it.
 * This one lets the loop read first (setImmediate runs after the poll phase)
 * and closes only a connection on which nothing arrived meanwhile; a request
 * that did arrive clears the timer as usual, and a connection that sent only
 * part of one gets the timer again from Node (and its headers timeout).
 */
import type { Server } from 'node:http'
import type { Socket } from 'node:net'

export function closeIdleConnectionsAfterReading(server: Server): void {
  server.on('timeout', (socket: Socket) => {
    const bytesRead = socket.bytesRead
    setImmediate(() => {
      if (!socket.destroyed && socket.bytesRead === bytesRead) socket.destroy()
    })
  })
}
