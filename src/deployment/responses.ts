import { BackPressureError, ReplicaOverloadedError, ReplicaUnavailableError, errorJson } from '../errors.js'

const JSON_TYPE = 'application/json; charset=utf-8'

/**
 * Any failure as an HTTP answer: `{ "error": { "type", "message" } }` with
 * the error's status, and `Retry-After` where waiting helps.
 */
export function errorResponse(error: unknown): Response {
  const { status, type, message } = errorJson(error)
  const headers: Record<string, string> = { 'content-type': JSON_TYPE }
  if (error instanceof BackPressureError) headers['retry-after'] = String(Math.max(1, Math.ceil(error.retryAfterS)))
  else if (error instanceof ReplicaUnavailableError || error instanceof ReplicaOverloadedError) headers['retry-after'] = '1'
  return new Response(JSON.stringify({ error: { type, message } }), { status, headers })
}
