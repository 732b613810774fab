import { ReplicaUnavailableError } from '../../errors.js'
import type { CarriedAnswer, CarriedRequest } from './carried-request.js'

/** Keeps work alive past its request's answer or its client's leaving: Workers' `ctx.waitUntil`. */
export type WaitUntil = (work: Promise<unknown>) => void

/** The most requests in one shared call, and the most body bytes. */
const MOST_REQUESTS = 128
const MOST_BYTES = 4 * 1024 * 1024
/** The longest a waiting request sleeps between looks at its answer. */
const MOST_NAP_MS = 50

/**
 * How long a request waits for a shared call's answer before it counts the
 * call as lost. The object answers a shared call within a few seconds (what
 * is not ready by then is claimed later; see carried-answers.ts), and the
 * platform keeps a request's `waitUntil` work alive 30 s after its client
 * left, so this passes only if the request that sent the call was torn down.
 */
export const SHARED_CALL_LOST_MS = 40_000

type Outcome = { readonly answer: CarriedAnswer } | { readonly error: unknown }

interface Waiter {
  readonly request: CarriedRequest
  readonly waitUntil: WaitUntil
  /** Set by whichever request's context the call's answer reaches. */
  outcome: Outcome | undefined
}

/**
 * The requests a Worker isolate receives together for one replica, carried
 * to it in one call. The hop into a Durable Object costs a small model more
 * than its own work (docs/workers.md measures it), and the platform bills
 * and limits an object per call; batching at the replica cannot amortize
 * the hop, so the Worker batches the hop too. (Ray Serve's proxy sends each
 * request on its own: its hop is a local one.)
 *
 * The first request to arrive sends the call once the requests arriving in
 * the same moment have joined it (a zero timer), or at once when the call
 * is full; its `waitUntil` keeps that work alive if its client leaves.
 *
 * What crosses between requests is plain data only, and no request runs
 * code on another's behalf. Each waiting request wakes on timers of its
 * own and finds its answer set: workerd means to run a promise's
 * continuation in the request that made the promise whoever resolves it,
 * but a plain Worker doing so was measured to resume requests in the
 * resolving request's context once V8's optimizing compiler had compiled
 * the path (workerd 1.20261117, about 15 s into a load; not with
 * `--max-opt=2`), and a Response built there fails ("Cannot perform I/O on
 * behalf of a different request"). The timers also keep the request alive:
 * workerd cancels one whose code waits on nothing of its own as hung.
 */
export class SharedCalls {
  #open: Waiter[] | undefined
  #bytes = 0

  constructor(private readonly send: (requests: CarriedRequest[]) => Promise<CarriedAnswer[]>) {}

  async carry(request: CarriedRequest, waitUntil: WaitUntil): Promise<CarriedAnswer> {
    const waiter: Waiter = { request, waitUntil, outcome: undefined }
    const size = request.body?.byteLength ?? 0
    if (this.#open !== undefined && this.#bytes + size > MOST_BYTES) this.#sendOpen(waiter)
    if (this.#open === undefined) this.#openCall(waiter)
    this.#open!.push(waiter)
    this.#bytes += size
    if (this.#open!.length >= MOST_REQUESTS) this.#sendOpen(waiter)
    return this.#answerOf(waiter)
  }

  /**
   * Look each millisecond, then less often as the wait grows: never later
   * than an eighth of the wait so far after the answer came (50 ms at most),
   * so that a long wait (a slow model) costs a few wake-ups, not hundreds.
   */
  async #answerOf(waiter: Waiter): Promise<CarriedAnswer> {
    const started = Date.now()
    while (waiter.outcome === undefined) {
      const waited = Date.now() - started
      await new Promise((wake) => setTimeout(wake, Math.min(MOST_NAP_MS, Math.max(1, Math.floor(waited / 8)))))
      if (waiter.outcome === undefined && Date.now() - started > SHARED_CALL_LOST_MS) {
        throw new ReplicaUnavailableError(
          `no answer came from the replica's shared call within ${SHARED_CALL_LOST_MS / 1000} s; the request that sent it was torn down`,
        )
      }
    }
    if ('error' in waiter.outcome) throw waiter.outcome.error
    return waiter.outcome.answer
  }

  /** A new call, sent from this request's context after a zero timer; the request stays alive until then. */
  #openCall(first: Waiter): void {
    const waiters: Waiter[] = []
    this.#open = waiters
    this.#bytes = 0
    first.waitUntil(
      new Promise<void>((done) =>
        setTimeout(() => {
          if (this.#open === waiters) this.#sendOpen(first)
          done()
        }, 0),
      ),
    )
  }

  /** Send the open call from `sender`'s context, which stays alive until the answers are handed out. */
  #sendOpen(sender: Waiter): void {
    const waiters = this.#open!
    this.#open = undefined
    if (waiters.length === 0) return
    const handOut = async () => {
      try {
        const answers = await this.send(waiters.map((waiter) => waiter.request))
        if (answers.length !== waiters.length) throw new Error(`a replica answered ${answers.length} of the ${waiters.length} requests of a shared call`)
        waiters.forEach((waiter, i) => (waiter.outcome = { answer: answers[i]! }))
      } catch (error) {
        for (const waiter of waiters) waiter.outcome = { error }
      }
    }
    sender.waitUntil(handOut())
  }
}
