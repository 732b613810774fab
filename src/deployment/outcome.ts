import { errorFromJson, errorJson, type ErrorJson } from '../errors.js'
import { decodeStream } from './stream-codec.js'

/**
 * The result of a handle call as it crosses a boundary (Durable Object RPC,
 * a worker thread, HTTP). Errors travel as `{ type, message, status }` and
 * are rebuilt into the same classes on the other side.
 */
export type Outcome =
  | { ok: true; value: unknown }
  /** A streamed result (an async iterable), encoded as NDJSON bytes; see stream-codec.ts. */
  | { ok: true; stream: ReadableStream<Uint8Array> }
  | { ok: false; error: ErrorJson }

export function failure(error: unknown): Outcome {
  return { ok: false, error: errorJson(error) }
}

/** The value (or stream of values) an outcome carries; its error, thrown. */
export function unwrap(outcome: Outcome): unknown {
  if (!outcome.ok) throw errorFromJson(outcome.error)
  return 'stream' in outcome ? decodeStream(outcome.stream) : outcome.value
}
