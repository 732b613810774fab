/**
 * The HTTP/1.1 server `serve()` listens with, and what each request meets
 * on Node before the app: @hono/node-server's request listener, which reads
 * request bodies and discards those an app left whole and unread, plus the
 * things it lacks, each with its reason below; the env the app sees; and
 * the count of requests in flight, for draining.
 */
import { getRequestListener, RequestError, type Http2Bindings, type HttpBindings } from '@hono/node-server'
import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'
import { answerBadJsonWith400 } from '../../deployment/body/json-or-400.js'
import { headerSource, watchDisconnect, type CancelTarget } from '../../http/runtime-env.js'
import { errorResponse, RequestCancelledError } from '../../errors.js'
import { answerClientErrors, type AnsweredRequest } from './client-errors.js'
import { drainOrCloseAfterAnswer } from './connections.js'
import { closeIdleConnectionsAfterReading } from './idle-connections.js'

export interface HttpServerOptions {
  /** Answers a request, with the env the app sees (see `RequestEnv`). */
  fetch(request: Request, env: object): Response | Promise<Response>
  /** Bindings every request's env holds (replica sets, `serve({ env })`). */
  env?: Record<string, unknown>
  /** Answers the requests whose path starts with `prefix` first, or leaves one to `fetch` by answering undefined. */
  before?: { prefix: string; fetch(request: Request): Promise<Response | undefined> }
  port: number
  hostname: string
  /** node:http's own options: `headersTimeout`, `requestTimeout`, `maxHeaderSize` and so on. */
  serverOptions?: ServerOptions
}

export interface HttpServer {
  readonly server: Server
  /** Requests being answered now. */
  readonly inFlight: number
  /** Answer every new request with a 503 from now on; resolves once none is in flight. */
  drain(): Promise<void>
}

const JSON_TYPE = 'application/json; charset=utf-8'
const SHUTTING_DOWN = JSON.stringify({ error: { type: 'ShuttingDown', message: 'the server is shutting down' } })

/** Listen on `hostname:port`; resolves once listening, rejects if the port cannot be had. */
export function listenHttp(options: HttpServerOptions): Promise<HttpServer> {
  const RequestEnv = requestEnvClass(options.env ?? {})
  const { before } = options
  // The request each connection is answering, for the parser's errors that come meanwhile.
  const answering = new WeakMap<Duplex, AnsweredRequest>()
  let inFlight = 0
  let draining = false
  let drained: (() => void) | undefined

  // One function per request: the adaptor calls it with Node's request and response.
  const fetch = async (request: Request, bindings: HttpBindings | Http2Bindings): Promise<Response> => {
    // The server below is HTTP/1.1: its bindings are node:http's.
    const { incoming, outgoing } = bindings as HttpBindings
    answering.set(incoming.socket, bindings as HttpBindings)
    const counted = !draining
    if (counted) inFlight++
    try {
      if (!counted) return new Response(SHUTTING_DOWN, { status: 503, headers: { 'content-type': JSON_TYPE, connection: 'close', 'retry-after': '1' } })
      if (request.method !== 'GET' && request.method !== 'HEAD') answerBadJsonWith400(request)
      if (before !== undefined) {
        // Checked on the URL string: parsing a URL per request costs more than the routing after it.
        const path = request.url.indexOf('/', request.url.indexOf('//') + 2)
        if (path >= 0 && request.url.startsWith(before.prefix, path)) {
          const answer = await before.fetch(request)
          if (answer) return answer
        }
      }
      return await options.fetch(request, new RequestEnv(incoming, outgoing))
    } finally {
      if (counted && --inFlight === 0) drained?.()
      // The adaptor drains a body still arriving for 500 ms, then resets the connection, and never says Connection: close.
      if (!(incoming.readableEnded || incoming.destroyed || incoming.complete)) drainOrCloseAfterAnswer(incoming, outgoing)
    }
  }
  // hostname also stands in for a request without a Host header. The adaptor would answer a request it
  // cannot make a URL of (a Host of "a b") 400, and an app's unhandled rejection 500, with no body:
  // each gets a JSON error, as any other.
  const errorHandler = (error: unknown) => (error instanceof RequestError ? unreadableRequest() : errorResponse(error))
  const listener = getRequestListener(fetch, { hostname: options.hostname, errorHandler })
  // The adaptor's listener catches its own errors (errorHandler above, then its own 500 or reset
  // while writing the response), so the promise it returns never rejects: Node ignores it, and so can we.
  const server = createServer(options.serverOptions ?? {}, (incoming, outgoing) => void listener(incoming, outgoing))
  // The adaptor leaves the requests Node's parser refuses to Node, which answers them without a JSON error.
  answerClientErrors(server, answering, { maxHeaderSize: options.serverOptions?.maxHeaderSize })
  // Node's keep-alive timer can close a connection with a request sent while a handler held the thread.
  closeIdleConnectionsAfterReading(server)
  const http: HttpServer = {
    server,
    get inFlight() {
      return inFlight
    },
    drain() {
      draining = true
      return inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => (drained = resolve))
    },
  }
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.hostname, () => {
      server.off('error', reject)
      resolve(http)
    })
  })
}

/** The answer to a request the adaptor could not make a Request of: its Host or target is no URL. */
function unreadableRequest(): Response {
  const body = JSON.stringify({ error: { type: 'HTTPError', message: 'the request has no valid URL: check its Host header and target' } })
  return new Response(body, { status: 400, headers: { 'content-type': JSON_TYPE } })
}

type Incoming = IncomingMessage
type Outgoing = ServerResponse

/**
 * The env an app sees for one request on Node: the app's shared bindings
 * (replica sets, `serve({ env })`) through the prototype rather than copied
 * per request, the `incoming`/`outgoing` objects @hono/node-server passes
 * (Hono's `getConnInfo` reads them), and what the ingress asks of the
 * runtime (see runtime-env.ts): a header read from Node's parsed ones, and
 * the request's scope cancelled when its client goes away.
 */
export function requestEnvClass(shared: Record<string, unknown>) {
  class RequestEnv {
    /** The scope to cancel if the client goes away before its answer is sent. */
    scope: CancelTarget | undefined = undefined

    constructor(
      readonly incoming: Incoming,
      readonly outgoing: Outgoing,
    ) {}

    [headerSource](name: string): string | null {
      const value = this.incoming.headers[name]
      return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value
    }

    /**
     * Cancel `scope` when the connection closes before the answer was sent.
     * The connection gets one 'close' listener, for all its requests, the
     * first time one is watched: a listener per request on its response cost
     * an EventEmitter wrapper and a listener list per request. A request
     * that was answered is dropped when the next one is watched, so a long
     * kept-alive connection holds only the requests it has in flight.
     */
    [watchDisconnect](scope: CancelTarget): void {
      this.scope = scope
      const socket = this.incoming.socket
      if (socket.destroyed) return clientGone(this)
      let requests = watched.get(socket)
      if (requests === undefined) {
        const list: RequestEnv[] = (requests = [])
        watched.set(socket, list)
        socket.once('close', () => {
          for (const request of list) clientGone(request)
          list.length = 0
        })
      } else {
        for (let i = requests.length - 1; i >= 0; i--) if (requests[i]!.outgoing.writableFinished) requests.splice(i, 1)
      }
      requests.push(this)
    }
  }
  Object.setPrototypeOf(RequestEnv.prototype, shared)
  return RequestEnv
}

/** Each connection's watched requests, by socket. */
const watched = new WeakMap<object, { readonly outgoing: Outgoing; readonly scope: CancelTarget | undefined }[]>()

/** The connection closed: a client that had not had its answer went away. */
function clientGone(request: { readonly outgoing: Outgoing; readonly scope: CancelTarget | undefined }): void {
  if (!request.outgoing.writableFinished) request.scope?.cancel(new RequestCancelledError('the client disconnected'))
}
