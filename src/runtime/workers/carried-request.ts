/**
 * A request and its answer as plain data, for a shared call: one call into
 * a replica's Durable Object that carries every request the Worker isolate
 * received for it meanwhile (see shared-calls.ts). workerd lets a request
 * use no I/O object of another (a stream, a Response read from a call), so
 * what crosses between the requests that share a call is bytes and strings.
 */

/** The largest body, by its Content-Length, that a request may bring to a shared call. */
export const CARRIED_BODY_BYTES = 64 * 1024

export interface CarriedRequest {
  readonly method: string
  readonly url: string
  readonly headers: [string, string][]
  readonly body: ArrayBuffer | null
}

/**
 * An answer in a shared call: whole; or a number to claim it by with a call
 * of the request's own (an answer that streams, is large, or was not ready
 * when the shared call answered; see carried-answers.ts); or what the
 * object's `fetch()` threw, as an overloaded object's does.
 */
export type CarriedAnswer = WholeAnswer | { readonly claim: number } | { readonly error: CarriedError }

/** A thrown error as plain data, with the marks workerd sets on an overloaded or reset object's errors. */
export interface CarriedError {
  readonly message: string
  readonly overloaded: boolean
  readonly retryable: boolean
  readonly durableObjectReset: boolean
}

export interface WholeAnswer {
  readonly status: number
  readonly statusText: string
  readonly headers: [string, string][]
  readonly body: string | Uint8Array | ArrayBuffer | null
}

/**
 * Whether a request may share a call: one that opens no WebSocket and has
 * no body or a small one of declared length. Any other keeps its own call,
 * which streams its body as it arrives.
 */
export function canCarry(request: Request): boolean {
  const { headers } = request
  if (headers.get('upgrade') !== null) return false
  const declared = headers.get('content-length')
  // Decided by the headers alone: in workerd `request.body` makes a stream object on each call.
  if (declared === null) return headers.get('transfer-encoding') === null
  return Number(declared) <= CARRIED_BODY_BYTES
}

/** The request as plain data: its body read whole. */
export async function carriedRequestOf(request: Request): Promise<CarriedRequest> {
  const { method, url, headers } = request
  const body = method === 'GET' || method === 'HEAD' ? null : await request.arrayBuffer()
  return { method, url, headers: [...headers], body: body === null || body.byteLength === 0 ? null : body }
}

/** The request again, in the Durable Object. */
export function requestOf(carried: CarriedRequest): Request {
  return new Request(carried.url, { method: carried.method, headers: carried.headers, body: carried.body })
}

/** A whole answer as the Response the client gets. */
export function responseOfWhole(answer: WholeAnswer): Response {
  const { status, statusText, headers } = answer
  // An empty status text would replace the platform's own ("OK") on the wire.
  return new Response(answer.body as ConstructorParameters<typeof Response>[0], statusText === '' ? { status, headers } : { status, statusText, headers })
}
