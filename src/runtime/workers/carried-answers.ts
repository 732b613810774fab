import { errorJson, ReplicaUnavailableError } from '../../errors.js'
import { errorResponse } from '../../deployment/responses.js'
import type { CarriedAnswer, CarriedError, WholeAnswer } from './carried-request.js'

/** The largest answer body carried back whole in a shared call; a larger one is claimed. */
const WHOLE_BODY_BYTES = 1024 * 1024
/** The longest a shared call waits for its answers; what is not ready by then is claimed. */
const LONGEST_WAIT_MS = 2_000
/** How long an answer waits to be claimed before it is dropped (its request is gone by then). */
const CLAIM_KEPT_MS = 60_000

/**
 * A Durable Object's side of shared calls (see shared-calls.ts): it answers
 * a call's requests together, each whole as plain data when it can. An
 * answer that streams, is large, or is not ready when the call answers is
 * kept under a number instead, and its request claims it with a call of its
 * own, since a stream can be read only by the request that made the call.
 *
 * The call answers once every answer is whole, or once the others have had
 * as long again as the first answer took to come (two seconds at most), so
 * that a slow request (a long stream, a slow model call) holds up the rest
 * by no more than that.
 */
export class CarriedAnswers {
  readonly #kept = new Map<number, { answer: Promise<Response>; drop: ReturnType<typeof setTimeout> }>()
  #lastClaim = 0

  async answer(answers: Promise<Response>[]): Promise<CarriedAnswer[]> {
    const started = Date.now()
    const pending = answers.map((answer) => new PendingAnswer(answer))
    const timers: ReturnType<typeof setTimeout>[] = []
    const late = new Promise<void>((resolve) => {
      timers.push(setTimeout(resolve, LONGEST_WAIT_MS))
      void Promise.race(pending.map((each) => each.answered)).then(() => timers.push(setTimeout(resolve, Date.now() - started)))
    })
    await Promise.race([Promise.all(pending.map((each) => each.whole)), late])
    timers.forEach(clearTimeout)
    return pending.map((each) => each.carried ?? { claim: this.#keep(each.handOff()) })
  }

  /** The answer kept under `claim`, for the call of its request's own. */
  claim(claim: number): Promise<Response> {
    const kept = this.#kept.get(claim)
    if (!kept) return Promise.resolve(errorResponse(new ReplicaUnavailableError(`no answer is kept under ${claim}: it was claimed or dropped`)))
    this.#kept.delete(claim)
    clearTimeout(kept.drop)
    return kept.answer
  }

  #keep(answer: Promise<Response>): number {
    const claim = ++this.#lastClaim
    const drop = setTimeout(() => {
      this.#kept.delete(claim)
      void answer.then((response) => response.body?.cancel()).catch(() => undefined)
    }, CLAIM_KEPT_MS)
    this.#kept.set(claim, { answer, drop })
    return claim
  }
}

/**
 * One request's answer while its shared call waits: `carried` once it is
 * whole (its body read) or failed, unless it is handed off first or is too
 * large to carry.
 */
class PendingAnswer {
  carried: WholeAnswer | { readonly error: CarriedError } | undefined
  /** Settles when the Response (or the failure) has come. */
  readonly answered: Promise<unknown>
  /** Settles when the answer is carried whole, or known not to be. */
  readonly whole: Promise<void>
  #handedOff = false
  #reader: ReadableStreamDefaultReader<Uint8Array> | undefined
  /** Body chunks read so far, and the read under way. */
  readonly #chunks: Uint8Array[] = []
  #reading: Promise<ReadableStreamReadResult<Uint8Array>> | undefined

  constructor(private readonly answer: Promise<Response>) {
    this.answered = answer.catch(() => undefined)
    this.whole = this.#collect()
  }

  async #collect(): Promise<void> {
    let response: Response
    try {
      response = await this.answer
    } catch (error) {
      // Thrown by the object's fetch(), as an overloaded object's is: the request's caller decides.
      if (!this.#handedOff) this.carried = { error: carriedError(error) }
      return
    }
    if (this.#handedOff) return
    if (response.body === null) return void (this.carried = wholeOf(response, null))
    try {
      this.#reader = response.body.getReader()
      let bytes = 0
      for (;;) {
        this.#reading = this.#reader.read()
        const read = await this.#reading
        if (this.#handedOff) return // the hand-off's stream takes this read's result
        this.#reading = undefined
        if (read.done) return void (this.carried = wholeOf(response, concat(this.#chunks, bytes)))
        this.#chunks.push(read.value)
        bytes += read.value.byteLength
        if (bytes > WHOLE_BODY_BYTES) return
      }
    } catch (error) {
      // The body failed before any of it went out: the request gets the error instead.
      if (!this.#handedOff) this.carried = wholeError(error)
    }
  }

  /** The answer as a Response, for its request to claim: what was read of its body, then the rest. */
  async handOff(): Promise<Response> {
    this.#handedOff = true
    const response = await this.answer
    const reader = this.#reader
    if (reader === undefined) return response
    const chunks = this.#chunks
    const rest = new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        const chunk = chunks.shift()
        if (chunk !== undefined) return controller.enqueue(chunk)
        const read = await (this.#reading ?? reader.read())
        this.#reading = undefined
        if (read.done) controller.close()
        else controller.enqueue(read.value)
      },
      cancel: (reason) => reader.cancel(reason),
    })
    return new Response(rest, response)
  }
}

/** An error as plain data, with the marks workerd sets on an overloaded or reset object's errors. */
function carriedError(error: unknown): CarriedError {
  const marks = (typeof error === 'object' && error !== null ? error : {}) as Partial<CarriedError>
  return {
    message: error instanceof Error ? error.message : String(error),
    overloaded: marks.overloaded === true,
    retryable: marks.retryable === true,
    durableObjectReset: marks.durableObjectReset === true,
  }
}

function wholeOf(response: Response, body: Uint8Array | null): WholeAnswer {
  return { status: response.status, statusText: response.statusText, headers: [...response.headers], body }
}

function wholeError(error: unknown): WholeAnswer {
  const { status, type, message } = errorJson(error)
  return { status, statusText: '', headers: [['content-type', 'application/json; charset=utf-8']], body: JSON.stringify({ error: { type, message } }) }
}

function concat(chunks: Uint8Array[], bytes: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!
  const whole = new Uint8Array(bytes)
  let at = 0
  for (const chunk of chunks) whole.set(chunk, at), (at += chunk.byteLength)
  return whole
}
