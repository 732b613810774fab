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
  addEventListener(type: 'abort', listener: EventListenerObject | (() => void), options?: { once?: boolean }): void
  removeEventListener(type: 'abort', listener: EventListenerObject | (() => void)): void
}
