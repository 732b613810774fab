import { YIELD_TURNS_MAX } from '../../src/batching/scheduler.js'

/** A promise with its resolve and reject exposed, to hold a handler mid-batch. */
export interface Deferred<T> {
  promise: Promise<T>
  resolve(value: T): void
  reject(error: unknown): void
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void
  let reject!: (error: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

/** Let every queued microtask (and the promise jobs they queue) run. */
export async function flushMicrotasks(rounds = 10): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve()
}

/**
 * Let the event loop turn until the batch queues owe it no turns: after a
 * batch that held the thread they wait up to YIELD_TURNS_MAX turns before the
 * next one starts (see scheduler.ts), and a test that follows one must not
 * inherit that wait.
 */
export async function passOwedLoopTurns(): Promise<void> {
  // The turn that notices a long hold comes one turn after the batch, then the
  // owed turns, then each waiting pump's own turn.
  for (let i = 0; i < YIELD_TURNS_MAX + 3; i++) await new Promise((resolve) => setImmediate(resolve))
}

/**
 * Let the queue's scheduled pump run (it waits for the current round of I/O,
 * a macrotask, and any turns owed), then the promise jobs it starts. See useFakeTime().
 */
export async function flushQueue(): Promise<void> {
  await passOwedLoopTurns()
  await flushMicrotasks()
}

/**
 * Fake clocks and timers, but not setImmediate: the queue's pump runs on a
 * macrotask, which these tests let happen, while time moves only when told.
 */
export async function useFakeTime(): Promise<void> {
  const { vi } = await import('vitest')
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] })
}

/** Hold the thread for `ms`, as a model run in WebAssembly does (it never yields). */
export function holdThread(ms: number): void {
  const until = performance.now() + ms
  while (performance.now() < until);
}
