/**
 * Errors that carry an HTTP status, so the ingress can answer every failure
 * with the right code and a JSON body without knowing where it came from.
 *
 * `type` is the class name as a string: it survives bundlers that mangle
 * `constructor.name`, and it is what clients see in `{ error: { type } }`.
 */
export class EdgeServeError extends Error {
  readonly status: number
  readonly type: string = 'EdgeServeError'

  constructor(status: number, message: string, options?: ErrorOptions) {
    super(message, options)
    this.status = status
  }

  /**
   * This error as its HTTP answer (errorResponse()). Hono's own error handler
   * answers a thrown error that has this method with it, so an edgeserve
   * error thrown in a plain route (a handle call's 404 or 504, an HTTPError
   * of the app's) answers with its status and JSON body there too, without
   * an `onError` of the app's.
   */
  getResponse(): Response {
    return errorResponse(this)
  }
}

/** The user's own validation failure: 400, 413, 422 and so on. */
export class HTTPError extends EdgeServeError {
  override readonly type: string = 'HTTPError'
  override name = 'HTTPError'

  constructor(status: number, message: string, options?: ErrorOptions) {
    if (!Number.isInteger(status) || status < 400 || status > 599) {
      throw new RangeError(`HTTPError: status must be an integer from 400 to 599, received ${String(status)}`)
    }
    super(status, message, options)
  }
}

/** A queue is full: refuse at once rather than let callers wait unbounded. */
export class BackPressureError extends EdgeServeError {
  override readonly type = 'BackPressureError'
  override name = 'BackPressureError'
  /** Seconds a client should wait before retrying (the ingress sends it as `Retry-After`). */
  readonly retryAfterS: number

  constructor(message: string, retryAfterS = 1) {
    super(503, message)
    this.retryAfterS = retryAfterS
  }
}

/**
 * A replica went away mid-request (a Durable Object reset or evicted) and the
 * request could not safely be retried: it was not idempotent.
 */
export class ReplicaUnavailableError extends EdgeServeError {
  override readonly type = 'ReplicaUnavailableError'
  override name = 'ReplicaUnavailableError'

  constructor(message: string, options?: ErrorOptions) {
    super(503, message, options)
  }
}

/**
 * A replica refused a request because it is overloaded: on Workers, a
 * Durable Object past its soft limit (about 1,000 requests/s, or too many or
 * too slow requests queued), which throws an error marked `overloaded`.
 * Cloudflare's advice is not to retry on the same object, so this is a 503
 * with `Retry-After`; the router avoids that replica for a moment and, where
 * it can resend the request, sends it to another one first.
 */
export class ReplicaOverloadedError extends EdgeServeError {
  override readonly type = 'ReplicaOverloadedError'
  override name = 'ReplicaOverloadedError'
  /**
   * The platform refused the request before the object ran it (its queue was
   * full), so it may go to another replica even when it is not idempotent.
   * False for overloads that reset an object mid-request (a memory limit).
   */
  readonly refused: boolean

  constructor(message: string, refused: boolean, options?: ErrorOptions) {
    super(503, message, options)
    this.refused = refused
  }
}

/** The caller's deadline passed before its result was ready. */
export class RequestTimeoutError extends EdgeServeError {
  override readonly type = 'RequestTimeoutError'
  override name = 'RequestTimeoutError'

  constructor(message = 'the request timed out before its result was ready') {
    super(504, message)
  }
}

/**
 * The caller went away (its signal aborted). 499 is nginx's "client closed
 * request": nobody is left to read it, but logs and metrics see the truth.
 */
export class RequestCancelledError extends EdgeServeError {
  override readonly type = 'RequestCancelledError'
  override name = 'RequestCancelledError'

  constructor(message = 'the request was cancelled', options?: ErrorOptions) {
    super(499, message, options)
  }
}

/**
 * The error a call fails with when its signal aborts: the reason as it is
 * when it is already one of these (a deadline that passed, a client that
 * disconnected), else a cancellation caused by it.
 */
export function cancellation(reason: unknown): RequestTimeoutError | RequestCancelledError {
  if (reason instanceof RequestTimeoutError || reason instanceof RequestCancelledError) return reason
  return new RequestCancelledError('the request was cancelled', { cause: reason })
}

/** One item is larger than a whole batch may be (with `batchSizeFn`). */
export class ItemTooLargeError extends EdgeServeError {
  override readonly type = 'ItemTooLargeError'
  override name = 'ItemTooLargeError'

  constructor(message: string) {
    super(413, message)
  }
}

/** The batched handler broke its contract (wrong result count, not an array). */
export class BatchHandlerError extends EdgeServeError {
  override readonly type = 'BatchHandlerError'
  override name = 'BatchHandlerError'

  constructor(message: string) {
    super(500, message)
  }
}

/**
 * Thrown by a batch handler to say which of its items failed, and why: the
 * key is the item's index in the items the handler received, the value is the
 * error that item's caller gets. The queue fails exactly those callers, runs
 * the handler once more on the rest, and answers them from that run.
 *
 * ```ts
 * throw new FailedItemsError([[3, new HTTPError(422, 'item has 2 values, but shape [8] needs 8')]])
 * ```
 *
 * `stack()`, `stackInt64()` and `pad()` of `edgeserve/onnx` throw it for
 * items that do not fit, so a handler that stacks its items needs no code of
 * its own. Outside a batch (one caller), it answers as its first item's error.
 */
export class FailedItemsError extends Error {
  override name = 'FailedItemsError'
  /** Item index -> the error its caller fails with, in index order. */
  readonly errors: ReadonlyMap<number, Error>

  constructor(errors: Iterable<readonly [index: number, error: Error]>, message?: string) {
    const byIndex = new Map<number, Error>()
    for (const [index, error] of errors) {
      if (!Number.isSafeInteger(index) || index < 0) {
        throw new TypeError(`FailedItemsError: an item index must be an integer, 0 or more, received ${String(index)}`)
      }
      if (!(error instanceof Error)) {
        throw new TypeError(`FailedItemsError: item ${index}'s error must be an Error, received ${typeof error}`)
      }
      byIndex.set(index, error)
    }
    const sorted = new Map([...byIndex].sort(([a], [b]) => a - b))
    super(message ?? failedItemsMessage(sorted))
    this.errors = sorted
  }

  /** The error of the item with the lowest index: what a lone caller is told. */
  get first(): Error | undefined {
    return this.errors.values().next().value
  }

  /** Its first item's answer, for Hono's error handler, as EdgeServeError's. */
  getResponse(): Response {
    return errorResponse(this)
  }
}

function failedItemsMessage(errors: ReadonlyMap<number, Error>): string {
  const shown = [...errors].slice(0, 3).map(([index, error]) => `item ${index}: ${error.message}`)
  const more = errors.size > shown.length ? `; and ${errors.size - shown.length} more` : ''
  return `${errors.size === 1 ? '1 item' : `${errors.size} items`} of the batch failed: ${shown.join('; ')}${more}`
}

/** The JSON shape of every error answer and of every error that crosses a boundary. */
export interface ErrorJson {
  type: string
  message: string
  status: number
}

/**
 * What a client may learn of an error. Our own errors say what went wrong;
 * anything else is an internal fault whose message may hold file paths or
 * secrets, so the client gets a generic message and the server log the rest.
 */
export function errorJson(error: unknown): ErrorJson {
  // Thrown where no batch queue takes it apart (a handler called directly): its first item's error.
  if (error instanceof FailedItemsError && error.first !== undefined) return errorJson(error.first)
  if (error instanceof EdgeServeError) return { type: error.type, message: error.message, status: error.status }
  // Not "in a deployment": errorResponse is public, and a plain route's onError uses it too.
  console.error('edgeserve: unhandled error while handling a request:', error)
  return { type: 'InternalServerError', message: 'an internal error occurred while handling this request', status: 500 }
}

/**
 * Rebuild an error that crossed a boundary as JSON (Durable Object RPC, a
 * worker thread, HTTP) into the same class, so `instanceof` keeps working.
 */
export function errorFromJson(error: ErrorJson): EdgeServeError {
  switch (error.type) {
    case 'BackPressureError':
      return new BackPressureError(error.message)
    case 'RequestTimeoutError':
      return new RequestTimeoutError(error.message)
    case 'RequestCancelledError':
      return new RequestCancelledError(error.message)
    case 'ItemTooLargeError':
      return new ItemTooLargeError(error.message)
    case 'BatchHandlerError':
      return new BatchHandlerError(error.message)
    case 'ReplicaUnavailableError':
      return new ReplicaUnavailableError(error.message)
    case 'ReplicaOverloadedError':
      return new ReplicaOverloadedError(error.message, false)
    default: {
      const status = Number.isInteger(error.status) && error.status >= 400 && error.status <= 599 ? error.status : 500
      if (error.type === 'HTTPError') return new HTTPError(status, error.message)
      return new EdgeServeError(status, error.message)
    }
  }
}

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
