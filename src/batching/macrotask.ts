/**
 * Run a callback after the event loop's current round: after the I/O that
 * is ready now has been handled.
 *
 * A batch queue that dispatched on a microtask would run the first request
 * of every I/O round alone: on a single thread a CPU-bound model run blocks,
 * the requests that arrive meanwhile wait in the OS, and when the loop reads
 * them each one's microtask dispatches it before the next is read. Deferring
 * to a macrotask lets every request that arrived together join one batch.
 *
 * setImmediate where the runtime has it (Node: right after the poll phase),
 * else a zero timeout (workerd, browsers). Not a MessageChannel: in workerd a
 * channel's handler belongs to one request's I/O context, and a timer
 * belongs to the request that set it, which is what keeps that request alive.
 */
type Callback = () => void

export function macrotask(callback: Callback): void {
  // Looked up per call: test runners swap the timer functions for fakes.
  const setImmediateNow = (globalThis as { setImmediate?: (callback: Callback) => unknown }).setImmediate
  if (setImmediateNow) setImmediateNow(callback)
  else setTimeout(callback, 0)
}
