import type { CancelListenerObject, CancelSignal } from '../batching/cancel-signal.js'
import { cancellation, RequestTimeoutError } from '../errors.js'
import type { RequestContext } from '../batching/context.js'
import type { ReplicaCall } from './endpoint.js'

type CancelListener = CancelListenerObject | (() => void)

/** What a `RequestScope` is made of. */
export interface RequestScopeOptions {
  /** Who made the request: the ingress (an HTTP request) or a handle call. */
  readonly origin: 'http' | 'handle'
  /** Epoch milliseconds; past it the scope aborts with a `RequestTimeoutError`. Undefined: no deadline. */
  readonly deadline?: number | undefined
  /** The model a multiplexed deployment serves the request with (already checked). */
  readonly multiplexedModelId?: string | undefined
  /** The caller's own signal, if it has one; the runtime may instead cancel the scope itself. */
  readonly callerSignal?: CancelSignal | undefined
  /** Safe to retry on a fresh replica if this one resets mid-call (Durable Objects). */
  readonly idempotent?: boolean | undefined
  /**
   * The deadline is the caller's own, and the caller's signal already aborts
   * at it (a handle call made inside a request): then this scope keeps no
   * timer of its own and its signal is the caller's, so every call the
   * request made leaves at the same moment, in the request's order.
   */
  readonly callerEnforcesDeadline?: boolean | undefined
}

/**
 * One request (or handle call) as every layer below the ingress sees it:
 * its origin, deadline, multiplexed model id and cancellation signal, made
 * once by whoever receives the request and passed down as it is. The
 * router waits with it, the replica runs the user's method inside it (so
 * batched calls inherit it, see `AmbientContext`), remote replicas send its
 * fields on.
 *
 * The scope is its own signal: it aborts when the caller goes away (the
 * caller's signal aborts, or the runtime cancels the scope when the client
 * disconnects) or when the deadline passes, whichever comes first. The
 * deadline is enforced here and nowhere else: past it, the scope aborts
 * with a `RequestTimeoutError`, and everything that listens to it (a wait
 * for a replica, a queued batched call, a handle call's children, the
 * replica's wait for the method) fails with it. The deadline's timer and
 * the listener on the caller's signal are set the first time something
 * asks for `signal`, so a request that goes straight through never sets
 * them.
 *
 * As a signal it is what an AbortController's would be to the queue and the
 * replicas, without the DOM event machinery around it, which a signal made
 * for every served request does not need.
 *
 * The scope is closed when the request is answered, by whoever made it or
 * by `route()`, which takes over the scopes handed to it: `close()` clears
 * its deadline timer and stops listening to the caller's signal.
 */
export class RequestScope implements RequestContext, ReplicaCall, CancelSignal {
  [key: string]: unknown
  aborted = false
  reason: unknown = undefined
  private listeners: CancelListener[] = []
  /** What `signal` gives, once asked: this scope, or the caller's own signal. */
  private given: CancelSignal | undefined = undefined
  private timer: ReturnType<typeof setTimeout> | undefined = undefined

  readonly origin: 'http' | 'handle'
  readonly deadline: number | undefined
  readonly multiplexedModelId: string | undefined
  readonly callerSignal: CancelSignal | undefined
  readonly idempotent: boolean
  /** False when the caller enforces the deadline (see `RequestScopeOptions.callerEnforcesDeadline`). */
  private readonly timesItself: boolean

  constructor(options: RequestScopeOptions) {
    this.origin = options.origin
    this.deadline = options.deadline
    this.multiplexedModelId = options.multiplexedModelId
    this.callerSignal = options.callerSignal
    this.idempotent = options.idempotent === true
    this.timesItself = options.callerEnforcesDeadline !== true
  }

  addEventListener(_type: 'abort', listener: CancelListener): void {
    if (!this.aborted) this.listeners.push(listener)
  }

  removeEventListener(_type: 'abort', listener: CancelListener): void {
    const at = this.listeners.indexOf(listener)
    if (at >= 0) this.listeners.splice(at, 1)
  }

  /** End the request now: its listeners hear it once, with `reason`; later calls do nothing. */
  cancel(reason: Error): void {
    if (this.aborted) return
    this.aborted = true
    this.reason = reason
    const listeners = this.listeners
    this.listeners = []
    for (const listener of listeners) {
      if (typeof listener === 'function') listener()
      else listener.handleEvent()
    }
  }

  /** Aborts when the caller goes away or the deadline passes, whichever comes first. */
  get signal(): CancelSignal {
    if (this.given !== undefined) {
      // A timer fires late when the event loop is busy (a model's run, a decode): whoever asks after the deadline
      // sees the request ended, not one still running.
      if (this.timer !== undefined && this.expired()) this.timeOut()
      return this.given
    }
    const caller = this.callerSignal
    // No clock of its own: the caller's signal says it all, or the runtime cancels this scope.
    if (this.deadline === undefined || !this.timesItself) return (this.given = caller ?? this)
    this.given = this
    if (caller !== undefined) {
      if (caller.aborted) this.cancel(cancellation(caller.reason))
      else caller.addEventListener('abort', this)
    }
    if (this.aborted) return this
    // One reading of the clock: a tick between two could make the timer's delay negative.
    const left = this.deadline - Date.now()
    if (left <= 0) this.cancel(new RequestTimeoutError())
    else this.timer = setTimeout(() => this.timeOut(), left)
    return this
  }

  /** Past the deadline by the clock, whether or not its timer has fired yet. */
  private expired(): boolean {
    return this.deadline !== undefined && Date.now() >= this.deadline
  }

  private timeOut(): void {
    clearTimeout(this.timer)
    this.timer = undefined
    this.cancel(new RequestTimeoutError())
  }

  /** The caller's signal aborted (the scope listens as an object, so a request costs no closure). */
  handleEvent(): void {
    this.cancel(cancellation(this.callerSignal?.reason))
  }

  /** The request is answered: no timer or listener outlives it. */
  close(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer)
      this.timer = undefined
    }
    if (this.given === this) this.callerSignal?.removeEventListener('abort', this)
  }

  /**
   * `work` raced against the end of the request: its result, or a failure
   * as soon as the signal aborts (the deadline passed, the caller went
   * away). A hung method becomes a 504 rather than a request that never
   * answers; the work itself is left to finish (or to notice the cancelled
   * signal) in the background. Work that finishes after the deadline fails
   * too, even when the deadline's timer has not fired yet (it runs late
   * behind a long synchronous step): a result must never reach code whose
   * request has already been answered 504, which would go on making calls
   * for nobody.
   */
  raceDeadline<R>(work: Promise<R>): Promise<R> {
    const signal = this.signal
    if (signal.aborted) return Promise.reject(cancellation(signal.reason))
    if (this.expired()) return Promise.reject(new RequestTimeoutError())
    return new Promise<R>((resolve, reject) => {
      const onAbort = () => reject(cancellation(signal.reason))
      signal.addEventListener('abort', onAbort)
      const done = () => signal.removeEventListener('abort', onAbort)
      work.then(
        (value) => {
          done()
          if (this.expired()) reject(new RequestTimeoutError())
          else resolve(value)
        },
        (error: unknown) => {
          done()
          // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the work's own rejection, passed on as it is
          reject(error)
        },
      )
    })
  }
}

/**
 * `work`, or a RequestTimeoutError once `timeoutMs` have passed: for the
 * user's hooks that no request waits on (`checkHealth()`, `dispose()`, a
 * multiplexed model's `release()`), bounded by a scope of their own as a
 * request is by its deadline. A hook that hangs is left to finish in the
 * background.
 */
export async function raceTimeout<R>(work: Promise<R>, timeoutMs: number): Promise<R> {
  // 'handle': the replica calls the user's code itself, as a handle call would; no HTTP request is behind it.
  const scope = new RequestScope({ origin: 'handle', deadline: Date.now() + timeoutMs })
  try {
    return await scope.raceDeadline(work)
  } finally {
    scope.close()
  }
}

/** `timeoutS` from now, as a deadline in epoch milliseconds; undefined without a timeout. */
export function deadlineFrom(timeoutS: number | undefined): number | undefined {
  return timeoutS === undefined ? undefined : Date.now() + timeoutS * 1000
}
