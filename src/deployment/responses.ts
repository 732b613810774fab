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
 * What a deployment's `fetch()` answered with a plain value, as the parts of
 * the HTTP answer: a replica on a worker thread sends these parts to the
 * server thread as they are, without building a Response to read back.
 */
export interface PlainAnswer {
  status: 200 | 204
  /** Undefined for no body. */
  contentType: string | undefined
  body: string | Uint8Array | ArrayBuffer | null
}

/** A deployment's answer to a request: a Response, or a plain value's parts. */
export type FetchAnswer = { response: Response } | { plain: PlainAnswer }

/**
 * What a deployment's `fetch()` returned, as Ray Serve treats `__call__`'s
 * result: a Response as is, a stream as an octet-stream Response, and any
 * other value as the parts of its answer (see `toResponse()`).
 */
export function answerOf(value: unknown): FetchAnswer {
  if (isResponse(value)) return { response: value }
  if (value instanceof ReadableStream) return { response: new Response(value, { headers: { 'content-type': 'application/octet-stream' } }) }
  return { plain: plainAnswer(value) }
}

function plainAnswer(value: unknown): PlainAnswer {
  if (value === undefined || value === null) return { status: 204, contentType: undefined, body: null }
  if (typeof value === 'string') return { status: 200, contentType: 'text/plain; charset=utf-8', body: value }
  if (value instanceof Uint8Array || value instanceof ArrayBuffer) return { status: 200, contentType: 'application/octet-stream', body: value }
  // JSON.stringify answers undefined for a function or a symbol: no body, as before.
  return { status: 200, contentType: 'application/json', body: JSON.stringify(value) ?? null }
}

/** A deployment's answer as a Response: the one it gave, or one built from a plain value's parts. */
export function responseOf(answer: FetchAnswer): Response {
  if ('response' in answer) return answer.response
  const { status, contentType, body } = answer.plain
  return new Response(body as ConstructorParameters<typeof Response>[0], contentType === undefined ? { status } : { status, headers: { 'content-type': contentType } })
}

/**
 * Turn what a deployment's `fetch()` returned into a Response, as Ray Serve
 * does for `__call__`: a Response as is, text as text/plain, bytes as
 * octet-stream, nothing as 204, anything else as JSON.
 */
export function toResponse(value: unknown): Response {
  return responseOf(answerOf(value))
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
