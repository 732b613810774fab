/**
 * A streamed body across a thread boundary, either way: the sending side
 * reads it and posts each chunk's bytes (transferred, not copied), the
 * receiving side rebuilds a ReadableStream from those messages.
 */
import type { Outcome } from '../../../deployment/outcome.js'
import { encodeStream, isAsyncIterable } from '../../../deployment/stream-codec.js'
import { EdgeServeError, errorJson } from '../../../errors.js'
import type { WholeOutcome } from './protocol.js'

/**
 * Read `body` to its end, handing each chunk as an ArrayBuffer of its own to
 * `chunk`, then call `end`, with the reason if reading failed. `reading`
 * gets the reader first, so that the caller can cancel it.
 */
export async function relayBody(
  body: ReadableStream<Uint8Array>,
  chunk: (bytes: ArrayBuffer) => void,
  end: (error?: string) => void,
  reading?: (reader: ReadableStreamDefaultReader<Uint8Array>) => void,
): Promise<void> {
  const reader = body.getReader()
  reading?.(reader)
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      chunk(transferable(value))
    }
    end()
  } catch (error) {
    end(error instanceof Error ? error.message : String(error))
  }
}

/** A chunk's bytes as an ArrayBuffer to transfer: the chunk's own buffer when it spans all of it, else a copy. */
export function transferable(chunk: Uint8Array): ArrayBuffer {
  const whole = chunk.byteOffset === 0 && chunk.byteLength === chunk.buffer.byteLength
  return (whole ? chunk.buffer : chunk.slice().buffer) as ArrayBuffer
}

/** A body whose chunks arrive as messages: enqueue them on `controller`; a reader that stops early calls `cancel`. */
export function incomingBody(cancel: () => void): { body: ReadableStream<Uint8Array>; controller: ReadableStreamDefaultController<Uint8Array> } {
  let controller!: ReadableStreamDefaultController<Uint8Array>
  const body = new ReadableStream<Uint8Array>({
    start: (it) => {
      controller = it
    },
    cancel,
  })
  return { body, controller }
}

/** Where a call's outcome goes: one message, or a stream's start, its chunks and its end. */
export interface OutcomeSink {
  whole: (outcome: WholeOutcome) => void
  stream: () => void
  chunk: (bytes: ArrayBuffer) => void
  end: (error?: string) => void
}

/**
 * Send a call's outcome to the other thread. A streamed result (an async
 * iterable, which cannot cross, or NDJSON bytes already) goes chunk by
 * chunk; anything else in one message, or, when it cannot be cloned, as
 * the error `unsendable` says.
 */
export async function sendOutcome(
  outcome: Outcome,
  to: OutcomeSink,
  unsendable: string,
  reading?: (reader: ReadableStreamDefaultReader<Uint8Array>) => void,
): Promise<void> {
  const stream =
    outcome.ok && 'value' in outcome && isAsyncIterable(outcome.value) ? encodeStream(outcome.value) : 'stream' in outcome ? outcome.stream : undefined
  if (stream) {
    to.stream()
    return relayBody(stream, to.chunk, to.end, reading)
  }
  try {
    to.whole(outcome as WholeOutcome)
  } catch {
    to.whole({ ok: false, error: errorJson(new EdgeServeError(500, unsendable)) })
  }
}

/**
 * The outcome of a call that failed on its way to the other thread:
 * arguments that cannot be cloned are the caller's to fix (400, saying
 * `where` they could not go); anything else is reported as it is.
 */
export function callFailure(error: unknown, method: string, where: string): Outcome {
  if ((error as { name?: string }).name !== 'DataCloneError') return { ok: false, error: errorJson(error) }
  const message = `the arguments of ${method}() cannot be sent ${where} (they are not structured-cloneable)`
  return { ok: false, error: { type: 'HTTPError', message, status: 400 } }
}
