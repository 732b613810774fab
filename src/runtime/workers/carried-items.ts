import { withResolvers } from '../../batching/resolvers.js'
import { heldBodyOf } from '../../deployment/body/held.js'
import { answerBadJsonWith400 } from '../../deployment/body/json-or-400.js'
import type { Outcome } from '../../deployment/outcome.js'
import type { Replica } from '../../deployment/replica.js'
import { encodeStream, isAsyncIterable } from '../../deployment/stream-codec.js'
import { errorResponse, RequestCancelledError } from '../../errors.js'
import { headerList, isStreamed, requestOf, wholeAnswerOf, type CarriedAnswer, type CarriedItem, type ClaimedAnswer } from './carried.js'

/** How long an answer waits to be claimed once it is ready: past it, its request's client left meanwhile, and a stream is cancelled. */
export const CLAIM_TIMEOUT_MS = 30_000
/** The longest a carried call waits for its slowest items once its first is answered; those left are claimed. */
export const MAX_STRAGGLER_WAIT_MS = 2_000

/** An item's answer as it settles: what crosses in the call, or what its request claims by a call of its own. */
type Settled = { readonly carried: CarriedAnswer } | { readonly claimed: ClaimedAnswer }

interface Claim {
  readonly answer: Promise<ClaimedAnswer>
  timer: ReturnType<typeof setTimeout> | undefined
}

/**
 * The object's side of a carried call (see gathered-calls.ts): each item
 * goes into the replica as though it had come alone, with its own deadline,
 * model id and signal, so it takes its own place in the batch queue.
 *
 * The call is answered once every item is, or, for items much slower than
 * the first (another batch, another method), once they have waited as long
 * again as the first took (MAX_STRAGGLER_WAIT_MS at most): an item answered
 * in a moment never waits behind one held for seconds. Its items still
 * queued then (more items than a batch holds leave a partial one, waiting
 * for other calls to fill it) start without the rest of their batch's wait
 * (Replica.startWaitingBatches) and get as long again. An item left out
 * after that, and a streamed answer, are claimed by the item's own request,
 * with a call of its own.
 */
export class CarriedItems {
  /** The signal of each item still running, by token: its caller may leave. */
  readonly #running = new Map<string, AbortController>()
  readonly #claims = new Map<string, Claim>()

  async carry(replica: Replica, items: readonly CarriedItem[], track: <T>(work: Promise<T>) => Promise<T>): Promise<CarriedAnswer[]> {
    const started = Date.now()
    const answers: (CarriedAnswer | undefined)[] = new Array<CarriedAnswer | undefined>(items.length)
    let left = items.length
    const { promise: allAnswered, resolve: answeredAll } = withResolvers<void>()
    const { promise: firstAnswered, resolve: answeredFirst } = withResolvers<void>()
    const settling = items.map((item, i) =>
      track(this.#run(replica, item)).then((settled) => {
        answeredFirst()
        if ('carried' in settled) answers[i] = settled.carried
        if (--left === 0) answeredAll()
        return settled
      }),
    )
    await firstAnswered
    if (left > 0) {
      const waitMs = Math.min(MAX_STRAGGLER_WAIT_MS, Math.max(1, Date.now() - started))
      await this.#waitFor(allAnswered, waitMs)
      if (left > 0) {
        // Those of its items still queued now wait for other calls to fill their batch, and could
        // wait out its batchWaitTimeoutS: they start now, and get a second chance to come back in
        // the call rather than by a claim (an object request more, each) that would wait as long.
        // Not at once: under load the next call most often fills their batch within the first wait.
        replica.startWaitingBatches()
        await this.#waitFor(allAnswered, waitMs)
      }
    }
    return items.map((item, i) => answers[i] ?? this.#claimLater(item.token, settling[i]!))
  }

  /** Until `done` settles, `ms` at most. */
  async #waitFor(done: Promise<void>, ms: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined
    await Promise.race([done, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))])
    clearTimeout(timer)
  }

  /** These items' callers left after their call went: they leave the batch queue, as a request whose client left does. */
  drop(tokens: readonly string[]): void {
    for (const token of tokens) {
      this.#running.get(token)?.abort(new RequestCancelledError('the caller went away after its call to this object went'))
      const claim = this.#claims.get(token)
      if (claim) void claim.answer.then((answer) => this.#expire(token, answer))
    }
  }

  /** The answer held for `token`, handed to the request it belongs to once it is ready. */
  async claim(token: string): Promise<ClaimedAnswer> {
    const claim = this.#claims.get(token)
    if (!claim) throw new Error(`no answer is held for ${token}: it was claimed already, or waited past ${CLAIM_TIMEOUT_MS} ms`)
    this.#claims.delete(token)
    clearTimeout(claim.timer)
    return claim.answer
  }

  async #run(replica: Replica, item: CarriedItem): Promise<Settled> {
    const controller = new AbortController()
    this.#running.set(item.token, controller)
    const call = { signal: controller.signal, deadline: item.deadline, multiplexedModelId: item.multiplexedModelId }
    try {
      if (item.kind === 'call') {
        const outcome = await replica.invoke(item.method, item.args, call)
        // An iterator cannot cross RPC; a byte stream can, by a call of the item's own.
        if (outcome.ok && 'value' in outcome && isAsyncIterable(outcome.value)) return { claimed: { ok: true, stream: encodeStream(outcome.value) } }
        return { carried: { outcome } }
      }
      const request = requestOf(item, controller.signal, replica.deployment.options.batching?.maxBodyBytes)
      // A held body answers a body that is not JSON with 400 already.
      if (item.body !== null && heldBodyOf(request) === undefined) answerBadJsonWith400(request)
      const answer = await replica.answer(request, call)
      if (isStreamed(answer)) {
        const { status, headers, body } = answer.response
        return { claimed: { status, headers: headerList(headers), body: body! } }
      }
      return { carried: { whole: await wholeAnswerOf(answer) } }
    } catch (error) {
      // A request that cannot be rebuilt (a header workerd refuses), or an answer whose body failed while read.
      return { carried: { whole: await wholeAnswerOf({ response: errorResponse(error) }) } }
    } finally {
      this.#running.delete(item.token)
    }
  }

  /** Hold an item's answer for its request to claim; unclaimed, it is let go CLAIM_TIMEOUT_MS after it is ready. */
  #claimLater(token: string, settling: Promise<Settled>): CarriedAnswer {
    const answer = settling.then((settled) =>
      'claimed' in settled ? settled.claimed : 'whole' in settled.carried ? settled.carried.whole : (settled.carried as { outcome: Outcome }).outcome,
    )
    const claim: Claim = { answer, timer: undefined }
    this.#claims.set(token, claim)
    void answer.then((ready) => {
      if (this.#claims.get(token) === claim) claim.timer = setTimeout(() => this.#expire(token, ready), CLAIM_TIMEOUT_MS)
    })
    return { claim: token }
  }

  #expire(token: string, answer: ClaimedAnswer): void {
    const claim = this.#claims.get(token)
    if (!claim) return
    this.#claims.delete(token)
    clearTimeout(claim.timer)
    const stream = 'stream' in answer ? answer.stream : 'body' in answer && answer.body instanceof ReadableStream ? answer.body : undefined
    void stream?.cancel().catch(() => undefined)
  }
}
