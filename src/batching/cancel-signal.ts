/**
 * What the batch queue, the router and the replicas need of a cancellation
 * signal: whether it fired, why, and a listener for when it does. Every
 * `AbortSignal` is one, and so is a `CancelSource`.
 */
export interface CancelSignal {
  readonly aborted: boolean
  readonly reason?: unknown
  addEventListener(type: 'abort', listener: CancelListenerObject | (() => void), options?: { once?: boolean }): void
  removeEventListener(type: 'abort', listener: CancelListenerObject | (() => void)): void
}

/**
 * A listener object, as `EventTarget` takes one. Spelled out rather than the
 * DOM's `EventListenerObject`, so that the package's declarations check in
 * projects without the DOM library (Node's and Cloudflare's types).
 */
export interface CancelListenerObject {
  handleEvent(): void
}

type CancelListener = CancelListenerObject | (() => void)

/**
 * A CancelSignal that fires when `cancel()` is called: what an
 * AbortController gives the queue and the replicas, without the DOM event
 * machinery around it, which a signal made for every served request (a
 * client's disconnect, a request's deadline, a thread's `abort` message)
 * does not need.
 */
export class CancelSource implements CancelSignal {
  aborted = false
  reason: unknown = undefined
  #listeners: CancelListener[] = []

  addEventListener(_type: 'abort', listener: CancelListener): void {
    if (!this.aborted) this.#listeners.push(listener)
  }

  removeEventListener(_type: 'abort', listener: CancelListener): void {
    const at = this.#listeners.indexOf(listener)
    if (at >= 0) this.#listeners.splice(at, 1)
  }

  /** Fire once: later calls do nothing. */
  cancel(reason: Error): void {
    if (this.aborted) return
    this.aborted = true
    this.reason = reason
    const listeners = this.#listeners
    this.#listeners = []
    for (const listener of listeners) {
      if (typeof listener === 'function') listener()
      else listener.handleEvent()
    }
  }
}
