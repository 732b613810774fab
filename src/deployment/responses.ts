import { BackPressureError, ReplicaUnavailableError, errorJson } from '../errors.js'

const JSON_TYPE = 'application/json; charset=utf-8'

/**
 * Any failure as an HTTP answer: `{ "error": { "type", "message" } }` with
 * the error's status, and `Retry-After` where waiting helps.
 */
export function errorResponse(error: unknown): Response {
  const { status, type, message } = errorJson(error)
  const headers: Record<string, string> = { 'content-type': JSON_TYPE }
  if (error instanceof BackPressureError) headers['retry-after'] = String(Math.max(1, Math.ceil(error.retryAfterS)))
  else if (error instanceof ReplicaUnavailableError) headers['retry-after'] = '1'
  return new Response(JSON.stringify({ error: { type, message } }), { status, headers })
}

/**
 * Turn what a deployment's `fetch()` returned into a Response, as Ray Serve
 * does for `__call__`: a Response as is, text as text/plain, bytes as
 * octet-stream, nothing as 204, anything else as JSON.
 */
export function toResponse(value: unknown): Response {
  if (isResponse(value)) return value
  if (value === undefined || value === null) return new Response(null, { status: 204 })
  if (typeof value === 'string') return new Response(value, { headers: { 'content-type': 'text/plain; charset=utf-8' } })
  if (value instanceof Uint8Array || value instanceof ArrayBuffer || value instanceof ReadableStream) {
    return new Response(value as ConstructorParameters<typeof Response>[0], { headers: { 'content-type': 'application/octet-stream' } })
  }
  return new Response(JSON.stringify(value), { headers: { 'content-type': 'application/json' } })
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
