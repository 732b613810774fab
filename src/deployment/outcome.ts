import {
  BackPressureError,
  BatchHandlerError,
  EdgeServeError,
  HTTPError,
  ItemTooLargeError,
  RequestCancelledError,
  ReplicaUnavailableError,
  RequestTimeoutError,
} from '../errors.js'
import { errorBody } from '../http/responses.js'
import { decodeStream } from './stream-codec.js'

/**
 * The result of a handle call as it crosses a boundary (Durable Object RPC,
 * HTTP). Errors travel as `{ type, message, status }` and are rebuilt into
 * the same classes on the other side, so `instanceof` keeps working.
 */
export type Outcome =
  | { ok: true; value: unknown }
  /** A streamed result (an async iterable), encoded as NDJSON bytes; see stream-codec.ts. */
  | { ok: true; stream: ReadableStream<Uint8Array> }
  | { ok: false; error: { type: string; message: string; status: number } }

export function failure(error: unknown): Outcome {
  const { status, body } = errorBody(error)
  return { ok: false, error: { ...body.error, status } }
}

export function rebuildError(error: { type: string; message: string; status: number }): EdgeServeError {
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
    default: {
      const status = Number.isInteger(error.status) && error.status >= 400 && error.status <= 599 ? error.status : 500
      if (error.type === 'HTTPError') return new HTTPError(status, error.message)
      return new EdgeServeError(status, error.message)
    }
  }
}

export function unwrap(outcome: Outcome): unknown {
  if (!outcome.ok) throw rebuildError(outcome.error)
  return 'stream' in outcome ? decodeStream(outcome.stream) : outcome.value
}
