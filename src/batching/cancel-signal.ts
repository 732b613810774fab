/**
 * What the batch queue, the router and the replicas need of a cancellation
 * signal: whether it fired, why, and a listener for when it does. Every
 * `AbortSignal` is one, and so is a `RequestScope`.
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
