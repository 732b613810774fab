/**
 * What the batch queue, the router and the replicas need of a cancellation
 * signal: whether it fired, why, and a listener for when it does. Every
 * `AbortSignal` is one. So is the Node adapter's client-disconnect signal,
 * which is smaller on purpose: Node 20 takes about 5 µs to make an
 * AbortController, more than the rest of a batched request costs.
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
 * AbortController gives the queue and the replicas, without its cost (Node
 * 20 takes about 5 µs to make one, more than the rest of a batched request
 * costs). For a request that carries one: a client's disconnect, a thread's
 * `abort` message.
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
