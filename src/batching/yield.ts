import { macrotask } from './scheduler.js'

/**
 * Let the event loop run: timers, I/O, new requests.
 *
 * A loop whose every await resolves as a microtask (a model run in WASM
 * resolves that way) never lets I/O in. Continuous batching depends on new
 * requests arriving between steps, so it yields a macrotask per step.
 */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => macrotask(resolve))
}
