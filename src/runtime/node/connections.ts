/**
 * What happens to a kept-alive connection when the app answers before it has
 * read the request body (a 413, 415, 400, 405 or 401 given on the headers
 * alone). The rest of the body is still on its way, and the next request on
 * the connection comes after it, so the server must either read that rest or
 * close the connection in a way the client can see and survive:
 *
 * - A body of at most `DRAIN_LIMIT_BYTES` is read and thrown away after the
 *   answer, within `DRAIN_TIMEOUT_MS`, and the connection stays open.
 * - A larger declared body is not read: the answer says `Connection: close`,
 *   and the connection closes gently (see `closeGently`).
 * - A body that passes either bound while it is drained (a chunked body of
 *   unknown length, or a client too slow to send it) also closes gently. The
 *   client is then still sending this request's body, so it has not sent
 *   another request on the connection that could be lost.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'

/** The most request-body bytes read, and thrown away, to keep a connection after an early answer. */
export const DRAIN_LIMIT_BYTES = 1024 * 1024
/** The longest wait for that rest of the body. */
export const DRAIN_TIMEOUT_MS = 5_000
/** How long a closing connection goes on reading what the client still sends, so that it can read its answer. */
export const LINGER_MS = 5_000

type Phase = 'answering' | 'draining' | 'closing'

/** Sockets whose request was answered while its body still arrives: being drained, or closing gently. */
const answeredEarly = new WeakSet<Duplex>()

/**
 * Whether `socket`'s request has had its answer while its body still
 * arrives. A parser error or a timeout on such a socket must not get a second
 * answer: the client has its answer, and the connection is drained or closed.
 */
export function answeredBeforeBodyEnded(socket: Duplex): boolean {
  return answeredEarly.has(socket)
}

/**
 * Call when the answer to `incoming` is ready, before its head is written,
 * if its body is still arriving (one that has all arrived is
 * @hono/node-server's to discard): sees to the rest of it as the module
 * comment says.
 */
export function drainOrCloseAfterAnswer(incoming: IncomingMessage, outgoing: ServerResponse): void {
  const socket = incoming.socket
  let phase: Phase = 'answering'
  const close = () => {
    if (phase === 'closing') return
    phase = 'closing'
    closeGently(socket, incoming)
  }
  // Node's server ends a `Connection: close` answer with socket.destroySoon(),
  // which destroys the socket as soon as the answer is flushed, and
  // @hono/node-server calls it too when its own 500 ms drain runs out. With
  // request bytes unread or still arriving, the kernel then answers them with
  // a reset, and a client still writing its upload gets a write error before
  // it has read the answer: the answer is lost. So on this socket, closing
  // goes through closeGently, and waits while the body is being drained.
  socket.destroySoon = () => {
    if (phase !== 'draining') close()
  }
  const declared = Number(incoming.headers['content-length'])
  if (declared > DRAIN_LIMIT_BYTES) {
    outgoing.setHeader('connection', 'close')
    return
  }
  // The connection is reusable: the socket closes as Node's server decides again.
  const keep = () => {
    answeredEarly.delete(socket)
    delete (socket as Partial<Socket>).destroySoon
  }
  outgoing.once('finish', () => {
    if (phase !== 'answering') return // the answer said `Connection: close` (the client asked for it)
    // A streamed answer may have read the whole body while it was sent.
    if (incoming.readableEnded) return keep()
    phase = 'draining'
    answeredEarly.add(socket)
    void drain(incoming).then((drained) => {
      if (!drained) return close()
      phase = 'answering'
      keep()
    })
  })
}

/**
 * Read the rest of the body and throw it away, up to the drain bounds.
 * Resolves true once it has all arrived, false past a bound or on an error.
 */
function drain(incoming: IncomingMessage): Promise<boolean> {
  return new Promise((resolve) => {
    let bytes = 0
    const finish = (drained: boolean) => {
      clearTimeout(timer)
      incoming.off('data', count)
      incoming.off('end', ended)
      incoming.off('close', closed)
      resolve(drained)
    }
    const count = (chunk: Buffer) => {
      bytes += chunk.length
      if (bytes > DRAIN_LIMIT_BYTES) finish(false)
    }
    const ended = () => finish(true)
    const closed = () => finish(incoming.complete)
    const timer = setTimeout(() => finish(false), DRAIN_TIMEOUT_MS)
    timer.unref()
    incoming.on('end', ended)
    incoming.on('close', closed)
    discardBody(incoming)
    incoming.on('data', count)
  })
}

/**
 * Close a connection without losing the answer already written to it:
 * send FIN once the answer is flushed, go on reading (and discarding) what
 * the client still sends, and destroy the socket when the client closes its
 * side or after `LINGER_MS`. A socket destroyed with bytes still unread makes
 * the kernel reset the connection, and a client that is still writing its
 * upload then fails before it reads the answer waiting for it.
 */
export function closeGently(socket: Duplex, incoming?: IncomingMessage): void {
  if (incoming && !incoming.complete) discardBody(incoming)
  if (answeredEarly.has(socket) && !socket.writable) return // already closing
  answeredEarly.add(socket)
  socket.end()
  const timer = setTimeout(() => socket.destroy(), LINGER_MS)
  timer.unref()
  socket.once('close', () => clearTimeout(timer))
}

/**
 * Let the body flow, unread. The web stream that @hono/node-server makes of
 * the body (once anything has pulled from it) pauses `incoming` whenever its
 * queue is full, and nobody reads that queue once the answer is given, so
 * its listener must go; Node's own dump of an unread body does the same.
 */
function discardBody(incoming: IncomingMessage): void {
  incoming.removeAllListeners('data')
  incoming.resume()
}
