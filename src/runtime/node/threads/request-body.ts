/**
 * A request's body across the thread boundary. The request's message goes
 * first, so the replica's thread starts on the headers at once, whatever
 * the body does; its deadline and its client's disconnect reach the thread
 * as for any request (and its metrics count them).
 *
 * - A body declared at 64 KiB or less (most requests': a JSON row, a
 *   text-line crop) is read whole on the server thread and follows in one
 *   message (`body-end` with its bytes, transferred).
 * - A larger one, or one of unknown length, is read only as the replica's
 *   code reads it: the worker's Request has a stream whose every read asks
 *   the server for one chunk (`body-pull`), and the server reads one from
 *   the socket and sends it (`body-chunk`), or the end (`body-end`).
 *
 * So the thread decides, as a replica in process does: an answer on the
 * headers alone (a 413 for a declared length, a 415, a 404) waits for no
 * byte, `readJson()`'s limit stops a chunked upload at the limit, a body
 * that never ends meets the request's deadline, and the server thread holds
 * no more of a large body than one chunk.
 */

import type { BodyError, BodyMessage } from './protocol.js'
import { transferable } from './relay.js'

/** The largest declared body sent whole, in one message: the server thread holds no more than this of one. */
const WHOLE_BODY_BYTES = 64 * 1024

/** The server thread's side: the request's body, sent whole or a chunk per pull. */
export class BodyUpload {
  #reader: ReadableStreamDefaultReader<Uint8Array> | undefined
  #ended = false
  readonly #whole: boolean

  constructor(
    private readonly request: Request,
    private readonly send: (message: BodyMessage, transfer?: ArrayBuffer[]) => void,
  ) {
    this.#whole = Number(request.headers.get('content-length') ?? NaN) <= WHOLE_BODY_BYTES
  }

  /** The request's message has gone: a small body is read and sent now. */
  start(): void {
    if (!this.#whole) return
    this.request.arrayBuffer().then(
      (bytes) => this.#end({ bytes }),
      (error: unknown) => this.#end({ error: bodyError(error) }),
    )
  }

  /** The worker's Request wants its next chunk (a small body is on its way whole already). */
  async pull(): Promise<void> {
    if (this.#whole || this.#ended) return
    const body = this.request.body
    if (body === null) return this.#end({})
    const reader = (this.#reader ??= body.getReader())
    try {
      const { done, value } = await reader.read()
      if (done) return this.#end({})
      const bytes = transferable(value)
      this.send({ type: 'body-chunk', bytes }, [bytes])
    } catch (error) {
      this.#end({ error: bodyError(error) })
    }
  }

  /** The worker's Request stopped reading (a size limit): stop reading the socket, as a reader in process cancels. */
  cancel(): void {
    this.#ended = true
    void this.#reader?.cancel().catch(() => undefined)
  }

  /** Send the end, once: with the whole body when it was small, or why it could not be read. */
  #end(last: { bytes?: ArrayBuffer; error?: BodyError }): void {
    if (this.#ended) return
    this.#ended = true
    this.send({ type: 'body-end', ...last }, last.bytes ? [last.bytes] : [])
  }
}

function bodyError(error: unknown): BodyError {
  const { message, code } = (error ?? {}) as { message?: unknown; code?: unknown }
  return { message: String(message ?? error), ...(typeof code === 'string' ? { code } : {}) }
}

/** The worker's side: a body stream fed by the server, a chunk per read. */
export class BodyDownload {
  readonly stream: ReadableStream<Uint8Array>
  #controller!: ReadableStreamDefaultController<Uint8Array>
  /** Resolves the pull waiting for the server's answer. */
  #answered: (() => void) | undefined
  #done = false

  /** `ask` posts a `body-pull`, `stop` a `body-cancel`. */
  constructor(ask: () => void, stop: () => void) {
    this.stream = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.#controller = controller
        },
        pull: () =>
          new Promise<void>((resolve) => {
            this.#answered = resolve
            ask()
          }),
        cancel: () => {
          this.#done = true
          stop()
        },
      },
      // Nothing is asked for before the replica's code reads: an answer on the headers alone reads no byte.
      { highWaterMark: 0 },
    )
  }

  /** A chunk from the server, or the end (with the whole body, when it was small). */
  receive(message: BodyMessage): void {
    if (this.#done) return
    if (message.bytes) this.#controller.enqueue(new Uint8Array(message.bytes))
    if (message.type === 'body-end') {
      if (message.error) return this.fail(Object.assign(new Error(message.error.message), message.error.code ? { code: message.error.code } : {}))
      this.#done = true
      this.#controller.close()
    }
    this.#wake()
  }

  /** The request ended before its body did (aborted, past its deadline): a read waiting for a chunk fails. */
  fail(error: Error): void {
    if (this.#done) return
    this.#done = true
    this.#controller.error(error)
    this.#wake()
  }

  #wake(): void {
    const answered = this.#answered
    this.#answered = undefined
    answered?.()
  }
}
