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
type SetImmediate = (callback: Callback) => unknown

// Looked up per call: test runners swap the timer functions for fakes.
const setImmediateNow = (): SetImmediate | undefined => (globalThis as { setImmediate?: SetImmediate }).setImmediate

export function macrotask(callback: Callback): void {
  const setImmediate = setImmediateNow()
  if (setImmediate) setImmediate(callback)
  else setTimeout(callback, 0)
}

/**
 * Run a callback after `turns` turns of Node's event loop, one setImmediate
 * per turn. Only for where scheduledCallbacksAlwaysRun(): elsewhere there is
 * no setImmediate, and a timer another request set may never fire.
 */
export function macrotaskAfterTurns(turns: number, callback: Callback): void {
  const setImmediate = setImmediateNow()!
  let left = turns
  const hop = (): void => {
    if (--left <= 0) callback()
    else setImmediate(hop)
  }
  setImmediate(hop)
}

/**
 * Whether a callback scheduled now is sure to run. Node's setImmediate always
 * runs. In workerd a timer belongs to the request whose code set it and may
 * be cancelled with that request, so nothing may wait on one that another
 * request set.
 */
export function scheduledCallbacksAlwaysRun(): boolean {
  return setImmediateNow() !== undefined && !inCloudflareWorkers()
}

/**
 * Whether `performance.now()` stands still while code runs: workerd moves its
 * clock only on I/O, so no stretch of code can be timed there.
 */
export function clockStandsStillWhileCodeRuns(): boolean {
  return inCloudflareWorkers()
}

function inCloudflareWorkers(): boolean {
  return (globalThis as { navigator?: { userAgent?: string } }).navigator?.userAgent === 'Cloudflare-Workers'
}
