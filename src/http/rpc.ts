import type { Invoke } from '../deployment/handle.js'
import { readJson } from '../deployment/body/read.js'
import { encodeStream, isAsyncIterable } from '../deployment/stream-codec.js'
import { errorResponse, HTTPError } from '../errors.js'
import { checkModelId, MODEL_ID_HEADER } from '../deployment/model-id.js'

/** Where remote handles call: POST /-/rpc/<app>/<deployment>/<method> with `{ "args": [...] }`. */
export const RPC_PREFIX = '/-/rpc/'

/** Finds how to invoke a deployment of an app; undefined when there is none. */
export type InvokerLookup = (app: string, deployment: string) => Invoke | undefined

/**
 * Serve the remote-handle route. It is reachable only with the server's
 * token: the caller must send `Authorization: Bearer <token>`, compared in
 * constant time so the answer's timing does not reveal how much matched.
 */
export async function handleRpc(request: Request, token: string, lookup: InvokerLookup): Promise<Response> {
  try {
    if (!(await sameSecret(bearerOf(request), token))) {
      return new Response(JSON.stringify({ error: { type: 'Unauthorized', message: 'a valid bearer token is required' } }), {
        status: 401,
        headers: { 'content-type': 'application/json; charset=utf-8', 'www-authenticate': 'Bearer' },
      })
    }
    if (request.method !== 'POST') throw new HTTPError(405, 'remote handle calls use POST')
    const path = new URL(request.url).pathname.slice(RPC_PREFIX.length).split('/').map(decodeSegment)
    if (path.length !== 3) throw new HTTPError(404, `expected ${RPC_PREFIX}<app>/<deployment>/<method>`)
    const [app, name, method] = path as [string, string, string]
    const invoke = lookup(app, name)
    if (!invoke) throw new HTTPError(404, `no deployment ${JSON.stringify(name)} in app ${JSON.stringify(app)}`)
    const body = await readJson(request)
    const args = (body as { args?: unknown } | null)?.args ?? []
    if (!Array.isArray(args)) throw new HTTPError(400, 'the body must be {"args": [...]}')
    const modelId = request.headers.get(MODEL_ID_HEADER)
    const multiplexedModelId = modelId === null ? undefined : checkModelId(modelId, `the ${MODEL_ID_HEADER} header`)
    const outcome = await invoke(method, args, request.signal, { multiplexedModelId })
    if (!outcome.ok) {
      return new Response(JSON.stringify({ error: { type: outcome.error.type, message: outcome.error.message } }), {
        status: outcome.error.status,
        headers: { 'content-type': 'application/json; charset=utf-8' },
      })
    }
    if ('stream' in outcome) {
      return new Response(outcome.stream, { headers: { 'content-type': 'application/x-ndjson; charset=utf-8' } })
    }
    if (isAsyncIterable(outcome.value)) {
      return new Response(encodeStream(outcome.value), { headers: { 'content-type': 'application/x-ndjson; charset=utf-8' } })
    }
    // Not Response.json(): on Node it builds a full undici Response, where this text body does not.
    return new Response(JSON.stringify({ value: outcome.value ?? null }), { headers: { 'content-type': 'application/json' } })
  } catch (error) {
    return errorResponse(error)
  }
}

/** A path segment, decoded; malformed percent-encoding is the caller's error (400), not ours. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment)
  } catch {
    throw new HTTPError(400, `expected ${RPC_PREFIX}<app>/<deployment>/<method> with valid percent-encoding`)
  }
}

function bearerOf(request: Request): string {
  const header = request.headers.get('authorization') ?? ''
  return header.startsWith('Bearer ') ? header.slice(7) : ''
}

/**
 * Constant-time comparison of two secrets: compare their SHA-256 digests byte
 * by byte without an early exit, so neither length nor content leaks.
 */
export async function sameSecret(given: string, expected: string): Promise<boolean> {
  const encoder = new TextEncoder()
  const [a, b] = await Promise.all([crypto.subtle.digest('SHA-256', encoder.encode(given)), crypto.subtle.digest('SHA-256', encoder.encode(expected))])
  const x = new Uint8Array(a)
  const y = new Uint8Array(b)
  let difference = 0
  for (let i = 0; i < x.length; i++) difference |= x[i]! ^ y[i]!
  return difference === 0 && expected.length > 0
}
