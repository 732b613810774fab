/**
 * A batched call's options, checked where they are given. A wrong one is the
 * caller's mistake, so the call throws at once, as DataLoader's load() does
 * for a missing key, rather than fail later in Node's words (a signal that
 * is not one) or be ignored (a deadline that is not a time).
 */
import { formatReceived } from './options.js'

/** `value` has passed `asCallOptions()`: an object, though maybe not a plain one. */
export function checkCallOptions(value: object): void {
  if (Array.isArray(value)) {
    throw new TypeError(`a batched call's options must be an object like { signal, deadline }, received ${formatReceived(value)}`)
  }
  const { signal, deadline, context } = value as { signal?: unknown; deadline?: unknown; context?: unknown }
  if (signal !== undefined && !isSignal(signal)) {
    throw new TypeError(`signal must be an AbortSignal (an AbortController's signal), received ${formatReceived(signal)}`)
  }
  if (deadline !== undefined && (typeof deadline !== 'number' || Number.isNaN(deadline))) {
    throw new TypeError(`deadline must be a time in epoch milliseconds, such as Date.now() + 5000, received ${formatReceived(deadline)}`)
  }
  if (context !== undefined && (typeof context !== 'object' || context === null || Array.isArray(context))) {
    throw new TypeError(`context must be an object of facts for batchKey, such as { origin: 'http' }, received ${formatReceived(context)}`)
  }
}

function isSignal(value: unknown): boolean {
  const signal = value as { aborted?: unknown; addEventListener?: unknown; removeEventListener?: unknown } | null
  return (
    typeof signal === 'object' &&
    signal !== null &&
    typeof signal.aborted === 'boolean' &&
    typeof signal.addEventListener === 'function' &&
    typeof signal.removeEventListener === 'function'
  )
}

/**
 * A batched function's second argument, as options: only an object is one.
 * `items.map(f)` passes each item's index there, and a call made so is a
 * plain call.
 */
export function asCallOptions<O extends object>(value: O | undefined): O | undefined {
  return typeof value === 'object' && value !== null ? value : undefined
}
