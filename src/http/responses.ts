import { BackPressureError, EdgeServeError, ReplicaUnavailableError } from '../errors.js'

/** The JSON body of every error answer: `{ error: { type, message } }`. */
export interface ErrorBody {
  error: { type: string; message: string }
}

/**
 * What a client may learn of an error. Our own errors say what went wrong;
 * anything else is an internal fault whose message may hold file paths or
 * secrets, so the client gets a generic message and the log gets the rest.
 */
export function errorBody(error: unknown): { status: number; body: ErrorBody } {
  if (error instanceof EdgeServeError) {
    return { status: error.status, body: { error: { type: error.type, message: error.message } } }
  }
  console.error('edgeserve: unhandled error in a deployment:', error)
  return {
    status: 500,
    body: { error: { type: 'InternalServerError', message: 'the deployment failed while handling this request' } },
  }
}

export function errorResponse(error: unknown): Response {
  const { status, body } = errorBody(error)
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' }
  if (error instanceof BackPressureError) headers['retry-after'] = String(Math.max(1, Math.ceil(error.retryAfterS)))
  else if (error instanceof ReplicaUnavailableError) headers['retry-after'] = '1'
  return new Response(JSON.stringify(body), { status, headers })
}

/**
 * Turn what a deployment's `fetch()` returned into a Response, as Ray Serve
 * does for `__call__`: a Response as is, text as text/plain (the seed's
 * `int(resp.text)`), bytes as octet-stream, nothing as 204, the rest as JSON.
 */
export function toResponse(value: unknown): Response {
  if (isResponse(value)) return value
  if (value === undefined || value === null) return new Response(null, { status: 204 })
  if (typeof value === 'string') return new Response(value, { headers: { 'content-type': 'text/plain; charset=utf-8' } })
  if (value instanceof Uint8Array || value instanceof ArrayBuffer || value instanceof ReadableStream) {
    return new Response(value as BodyInit, { headers: { 'content-type': 'application/octet-stream' } })
  }
  return Response.json(value)
}

/**
 * `instanceof Response` is not enough: @hono/node-server swaps the global
 * Response for a lighter class, and `Response.json()` may still build the
 * platform's own; other realms have their own class too.
 */
export function isResponse(value: unknown): value is Response {
  if (value instanceof Response) return true
  return (
    typeof value === 'object' &&
    value !== null &&
    Object.prototype.toString.call(value) === '[object Response]' &&
    typeof (value as Response).status === 'number'
  )
}
