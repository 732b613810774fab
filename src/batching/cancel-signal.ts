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
