/**
 * Answers for the requests Node's HTTP parser refuses before the app sees
 * them: a malformed request (400), a request head past the header size limit
 * (431), chunk extensions past theirs (413), a request that does not arrive
 * within the server's headers or request timeout (408). Node's own answers
 * carry no body; these carry the JSON error every other refusal carries,
 * `{ "error": { "type", "message" } }`, and `Connection: close`, since the
 * rest of the connection's bytes can no longer be read as requests.
 */
import { STATUS_CODES, maxHeaderSize, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'
import { answeredBeforeBodyEnded, closeGently } from './connections.js'

interface ClientErrorAnswer {
  status: number
  type: string
  message: string
}

/** The error answer for one of the parser's errors (`error.code` is llhttp's `HPE_*` or Node's). */
function clientErrorAnswer(
  error: Error & { code?: string; reason?: string },
  limits: { maxHeaderSize: number; headersTimeoutMs: number; requestTimeoutMs: number },
): ClientErrorAnswer {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, type: 'HeadersTooLarge', message: `the request line and headers together must fit in ${limits.maxHeaderSize} bytes` }
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, type: 'ChunkExtensionsTooLarge', message: 'the chunk extensions of this chunked body are too long' }
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        status: 408,
        type: 'ClientTimeout',
        message:
          `the request did not arrive in time: its headers must arrive within ${limits.headersTimeoutMs / 1000} s` +
          (limits.requestTimeoutMs > 0 ? ` and the whole request within ${limits.requestTimeoutMs / 1000} s` : ''),
      }
    default:
      return { status: 400, type: 'MalformedRequest', message: `this is not a valid HTTP/1.1 request${error.reason ? `: ${error.reason}` : ''}` }
  }
}

/** A request the app was handed, with its response. */
export interface AnsweredRequest {
  readonly incoming: IncomingMessage
  readonly outgoing: ServerResponse
}

/**
 * Answer the parser's errors on `server` with JSON. A request pipelined
 * before the bad one keeps its own answer, which goes first; a request whose
 * answer has begun gets no second one, its connection is only closed, as
 * Node itself does. `answering` holds the last request each socket handed to
 * the app (the server's request handler records it). Pass the server's
 * `maxHeaderSize` if it was set, for the 431's message.
 */
export function answerClientErrors(server: Server, answering: WeakMap<Duplex, AnsweredRequest>, limits: { maxHeaderSize?: number } = {}): void {
  const refused = new WeakSet<Duplex>()
  server.on('clientError', (error: Error & { code?: string }, socket: Duplex) => {
    // Once the connection is refused, Node reports the same parser error
    // again for every later chunk that closeGently reads; one answer is enough.
    if (refused.has(socket)) return
    refused.add(socket)
    if (error.code === 'ECONNRESET') return void socket.destroy()
    // The request has its answer and the rest of its body is being read:
    // no second answer, and no reset while the client may still be reading.
    if (answeredBeforeBodyEnded(socket)) return closeGently(socket)
    if (!socket.writable) return void socket.destroy()
    const refuse = () => {
      if (!socket.writable) return void socket.destroy()
      const answer = clientErrorAnswer(error, {
        maxHeaderSize: limits.maxHeaderSize ?? maxHeaderSize,
        headersTimeoutMs: server.headersTimeout,
        requestTimeoutMs: server.requestTimeout,
      })
      const body = JSON.stringify({ error: { type: answer.type, message: answer.message } })
      socket.write(
        `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status]}\r\n` +
          'Content-Type: application/json; charset=utf-8\r\n' +
          `Content-Length: ${Buffer.byteLength(body)}\r\n` +
          'Connection: close\r\n\r\n' +
          body,
      )
      closeGently(socket)
    }
    const current = answering.get(socket)
    // No request, or its answer is all written (or never will be): this answer goes next.
    if (!current || current.outgoing.writableFinished || current.outgoing.destroyed) return refuse()
    // Whole, so the error is in a request pipelined after it: answers go in order.
    if (current.incoming.complete) return void current.outgoing.once('close', refuse)
    // The error is in this request's own body: the error is its answer, unless one has begun.
    if (current.outgoing.headersSent) return void socket.destroy()
    refuse()
  })
}
