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
import { closeGently } from './connections.js'

interface ClientErrorAnswer {
  status: number
  type: string
  message: string
}

/** The error answer for one of the parser's errors (`error.code` is llhttp's `HPE_*` or Node's). */
export function clientErrorAnswer(error: Error & { code?: string; reason?: string }, limits: { maxHeaderSize: number; headersTimeoutMs: number; requestTimeoutMs: number }): ClientErrorAnswer {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, type: 'HeadersTooLarge', message: `the request line and headers together must fit in ${limits.maxHeaderSize} bytes` }
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, type: 'ChunkExtensionsTooLarge', message: 'the chunk extensions of this chunked body are too long' }
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        status: 408,
        type: 'ClientTimeout',
        message: `the request did not arrive in time: its headers must arrive within ${limits.headersTimeoutMs / 1000} s and the whole request within ${limits.requestTimeoutMs / 1000} s`,
      }
    default:
      return { status: 400, type: 'MalformedRequest', message: `this is not a valid HTTP/1.1 request${error.reason ? `: ${error.reason}` : ''}` }
  }
}

/**
 * Answer the parser's errors on `server` with JSON. Sockets whose answer has
 * begun get no second answer, only closed, as Node itself does. Pass the
 * server's `maxHeaderSize` if it was set, for the 431's message.
 */
export function answerClientErrors(server: Server, limits: { maxHeaderSize?: number } = {}): void {
  const answering = new WeakMap<Duplex, ServerResponse>()
  const refused = new WeakSet<Duplex>()
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    answering.set(request.socket, response)
    response.once('close', () => {
      if (answering.get(request.socket) === response) answering.delete(request.socket)
    })
  })
  server.on('clientError', (error: Error & { code?: string }, socket: Duplex) => {
    // Once the connection is refused, Node reports the same parser error
    // again for every later chunk that closeGently reads; one answer is enough.
    if (refused.has(socket)) return
    refused.add(socket)
    if (error.code === 'ECONNRESET' || !socket.writable || answering.get(socket)?.headersSent) return void socket.destroy()
    const answer = clientErrorAnswer(error, { maxHeaderSize: limits.maxHeaderSize ?? maxHeaderSize, headersTimeoutMs: server.headersTimeout, requestTimeoutMs: server.requestTimeout })
    const body = JSON.stringify({ error: { type: answer.type, message: answer.message } })
    socket.write(
      `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    )
    closeGently(socket)
  })
}
