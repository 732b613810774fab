import { CancelSource, type CancelSignal } from '../batching/cancel-signal.js'
import { cancellation, RequestTimeoutError } from '../errors.js'
import type { RequestContext } from '../batching/context.js'
import type { ReplicaCall } from './endpoint.js'

/** Where a scope's caller signal comes from: a signal, or a function that makes one the first time it is asked. */
export type SignalSource = CancelSignal | (() => CancelSignal) | undefined

/**
 * One request (or handle call) as every layer below the ingress sees it:
 * its origin, deadline, multiplexed model id and cancellation signal, made
 * once by whoever receives the request and passed down as it is. The
 * router waits with it, the replica runs the user's method inside it (so
 * batched calls inherit it, see `AmbientContext`), remote replicas send its
 * fields on.
 *
 * The deadline is enforced here and nowhere else: past it, the scope's
 * signal aborts with a `RequestTimeoutError`, and everything that listens to
 * the signal (a wait for a replica, a queued batched call, a handle call's
 * children, the replica's wait for the method) fails with it. The signal is
 * made the first time something listens, so a request that goes straight
 * through, without a deadline, never makes one.
 *
 * Whoever makes a scope calls `close()` when the request is answered: that
 * clears its deadline timer and stops listening to the caller's signal.
 */
export class RequestScope implements RequestContext, ReplicaCall {
  [key: string]: unknown
  #signal: CancelSignal | undefined = undefined
  #timer: ReturnType<typeof setTimeout> | undefined = undefined
  #caller: CancelSignal | undefined = undefined

  constructor(
    readonly origin: 'http' | 'handle',
    readonly deadline: number | undefined,
    readonly multiplexedModelId: string | undefined,
    private readonly callerSignal: SignalSource,
    readonly idempotent: boolean = false,
    /**
     * False when the deadline is the caller's own and the caller's signal
     * already aborts at it (a handle call made inside a request): then this
     * scope keeps no timer of its own, and every call the request made
     * leaves at the same moment, in the request's order.
     */
    private readonly timesItself: boolean = true,
  ) {}

  /** Aborts when the caller goes away or the deadline passes, whichever comes first. */
  get signal(): CancelSignal | undefined {
    if (this.#signal !== undefined) {
      // A timer fires late when the event loop is busy (a model's run, a decode): whoever asks after the deadline
      // sees the request ended, not one still running.
      if (this.#timer !== undefined && this.#expired()) this.#timeOut()
      return this.#signal
    }
    const caller = typeof this.callerSignal === 'function' ? this.callerSignal() : this.callerSignal
    if (this.deadline === undefined || !this.timesItself) return (this.#signal = caller)
    // Both the caller and the clock may end the request: one signal for the two.
    const source = new CancelSource()
    this.#signal = source
    if (caller !== undefined) {
      if (caller.aborted) source.cancel(cancellation(caller.reason))
      else {
        this.#caller = caller
        caller.addEventListener('abort', this)
      }
    }
    if (source.aborted) return source
    if (this.#expired()) source.cancel(new RequestTimeoutError())
    else this.#timer = setTimeout(() => this.#timeOut(), this.deadline - Date.now())
    return source
  }

  /** Past the deadline by the clock, whether or not its timer has fired yet. */
  #expired(): boolean {
    return this.deadline !== undefined && Date.now() >= this.deadline
  }

  #timeOut(): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
    ;(this.#signal as CancelSource).cancel(new RequestTimeoutError())
  }

  /** The caller's signal aborted (the scope listens as an object, so a request costs no closure). */
  handleEvent(): void {
    ;(this.#signal as CancelSource).cancel(cancellation(this.#caller?.reason))
  }

  /** The request is answered: no timer or listener outlives it. */
  close(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#caller?.removeEventListener('abort', this)
    this.#timer = this.#caller = undefined
  }

  /**
   * Settle with `work`, or fail as soon as the signal aborts (the deadline
   * passed, the caller went away). A hung method becomes a 504 rather than
   * a request that never answers; the work itself is left to finish (or to
   * notice the cancelled signal) in the background. Work that finishes
   * after the deadline fails too, even when the deadline's timer has not
   * fired yet (it runs late behind a long synchronous step): a result must
   * never reach code whose request has already been answered 504, which
   * would go on making calls for nobody.
   */
  settle<R>(work: Promise<R>): Promise<R> {
    const signal = this.signal
    if (signal === undefined) return work
    if (signal.aborted) return Promise.reject(cancellation(signal.reason))
    if (this.#expired()) return Promise.reject(new RequestTimeoutError())
    return new Promise<R>((resolve, reject) => {
      const onAbort = () => reject(cancellation(signal.reason))
      signal.addEventListener('abort', onAbort)
      const done = () => signal.removeEventListener('abort', onAbort)
      work.then(
        (value) => {
          done()
          if (this.#expired()) reject(new RequestTimeoutError())
          else resolve(value)
        },
        (error: unknown) => {
          done()
          reject(error)
        },
      )
    })
  }
}

/** `timeoutS` from now, as a deadline in epoch milliseconds; undefined without a timeout. */
export function deadlineFrom(timeoutS: number | undefined): number | undefined {
  return timeoutS === undefined ? undefined : Date.now() + timeoutS * 1000
}
