import { holdBytes } from '../../deployment/body/held.js'
import type { Outcome } from '../../deployment/outcome.js'
import type { FetchAnswer } from '../../deployment/replica.js'

/**
 * What crosses from a Worker isolate to a replica's Durable Object when the
 * isolate carries several requests and handle calls in one call (see
 * gathered-calls.ts), and what comes back for each. Plain data only: a
 * Request or Response belongs to the request that made it, and workerd
 * refuses its use from another one, so a body crosses as bytes.
 */
export type CarriedItem = CarriedRequest | CarriedCall

/**
 * Headers as one flat list, name then value: `['content-type', 'application/json', ...]`.
 * perf: one array a message rather than one per header, for the structured
 * clone of every carried request and answer, both ways.
 */
export type HeaderList = readonly string[]

interface CarriedFields {
  /** Names the item in its object, for dropping it when its caller leaves, and for claiming a streamed answer. */
  readonly token: string
  /** Epoch milliseconds: the caller's deadline, which the object keeps as though the item had come alone. */
  readonly deadline: number | undefined
  readonly multiplexedModelId: string | undefined
}

/** An HTTP request, with a body small enough to read whole in the Worker (see isCarriable). */
export interface CarriedRequest extends CarriedFields {
  readonly kind: 'request'
  readonly method: string
  readonly url: string
  readonly headers: HeaderList
  readonly body: ArrayBuffer | null
}

/** A handle call. */
export interface CarriedCall extends CarriedFields {
  readonly kind: 'call'
  readonly method: string
  readonly args: unknown[]
}

/** An HTTP answer read whole in the object. */
export interface WholeAnswer {
  readonly status: number
  readonly headers: HeaderList
  readonly body: ArrayBuffer | string | null
}

/**
 * One item's answer, in the carrying call: a whole HTTP answer, a handle
 * call's outcome, or the token to claim it by, with a call of the item's own
 * request: for a streamed answer (only the request that made a call can read
 * a stream it returns), and for an item much slower than the others of its
 * call (see CarriedItems).
 */
export type CarriedAnswer = { readonly whole: WholeAnswer } | { readonly outcome: Outcome } | { readonly claim: string }

/** A streamed HTTP answer, as `claim()` hands it to the request it belongs to. */
export interface StreamedAnswer {
  readonly status: number
  readonly headers: HeaderList
  readonly body: ReadableStream<Uint8Array>
}

/** What `claim()` hands over: an HTTP answer, whole or streamed, or a handle call's outcome. */
export type ClaimedAnswer = WholeAnswer | StreamedAnswer | Outcome

/** What the Worker's request sends of itself: its head, and the bytes of its body (a small one, see isCarriable), or null. */
export function carriedRequest(
  request: Request,
  body: ArrayBuffer | null,
  token: string,
  deadline: number | undefined,
  multiplexedModelId: string | undefined,
): CarriedRequest {
  return { kind: 'request', token, deadline, multiplexedModelId, method: request.method, url: request.url, headers: headerList(request.headers), body }
}

/**
 * The request as the object's replica sees it: rebuilt from the item, with
 * the item's own signal. With `bodyLimit`, a body of at most that many bytes
 * is held (holdBytes()) rather than given to the Request to stream: a
 * deployment that batches requests reads each body whole before it joins
 * a batch, and this one is whole already.
 */
export function requestOf(item: CarriedRequest, signal: AbortSignal, bodyLimit?: number): Request {
  const { method, url, headers, body } = item
  if (body === null || bodyLimit === undefined || body.byteLength > bodyLimit) return new Request(url, { method, headers: headersOf(headers), body, signal })
  const request = new Request(url, { method, headers: headersOf(headers), signal })
  holdBytes(request, new Uint8Array(body))
  return request
}

/**
 * Headers from a HeaderList, appended one by one. perf: workerd takes 15 to
 * 16 µs to build Headers from a list of four name-value pairs, and 2 to
 * 2.6 µs to append the same four to empty Headers (a loop of 20,000 in
 * workerd 1.20261117); a carried request and its answer each build one.
 */
function headersOf(list: HeaderList): Headers {
  const headers = new Headers()
  for (let i = 0; i < list.length; i += 2) headers.append(list[i]!, list[i + 1]!)
  return headers
}

/** Headers as a HeaderList. */
export function headerList(headers: Headers): string[] {
  const list: string[] = []
  headers.forEach((value, name) => list.push(name, value))
  return list
}

/**
 * Answers whose bodies may never end: event streams, and the bytes of a
 * stream or async iterable a deployment returned (answerOf() types those
 * octet-stream). They are claimed by their own request, not read here.
 */
const STREAMED_TYPES = /^(?:text\/event-stream|application\/octet-stream|application\/x-ndjson)/i

/** Whether the object hands this answer over as a stream, to be claimed, rather than read whole. */
export function isStreamed(answer: FetchAnswer): answer is { response: Response } {
  return 'response' in answer && answer.response.body !== null && STREAMED_TYPES.test(answer.response.headers.get('content-type') ?? '')
}

/** A replica's answer read whole, for the trip back in the carrying call. */
export async function wholeAnswerOf(answer: FetchAnswer): Promise<WholeAnswer> {
  if ('plain' in answer) {
    const { status, contentType, body } = answer.plain
    const plainBody = body instanceof Uint8Array ? ownBuffer(body) : body
    return { status, headers: contentType === undefined ? [] : ['content-type', contentType], body: plainBody }
  }
  const { response } = answer
  return { status: response.status, headers: headerList(response.headers), body: response.body === null ? null : await response.arrayBuffer() }
}

/** The bytes of a view, as a buffer of their exact length: a view of a larger buffer would carry all of it. */
function ownBuffer(view: Uint8Array): ArrayBuffer {
  return new Uint8Array(view).buffer
}

/** The Response the Worker's request answers with, from a whole or streamed answer. */
export function responseFrom(answer: WholeAnswer | StreamedAnswer): Response {
  const { status, headers, body } = answer
  return new Response(body, headers.length === 0 ? { status } : { status, headers: headersOf(headers) })
}
