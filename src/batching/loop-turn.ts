/**
 * How long batches may hold the thread before the event loop must turn (read
 * its I/O, accept connections, run its timers), and how often it turns after.
 *
 * A full batch starts on a microtask, so that a lone request does not wait a
 * loop turn, and so that a queue of cheap batches (a no-op model, a small
 * regressor) runs them back to back without paying a turn each. But a model
 * run holds the thread, and everything that follows one on promise jobs
 * follows it without a turn: the next full batch of the same queue, or a
 * pipeline's next stage called with what the last one returned. Thirty-two
 * OCR pages in flight chain their stages that way for seconds; meanwhile no
 * request is read, and a kept-alive connection whose next request sits unread
 * past Node's keep-alive timeout is reset with that request on it.
 *
 * So a batch after the first in a turn, whether a full one on a promise job
 * or one a queue's pump starts, starts only while the turn is young: under
 * TURN_BUDGET_MS since its first batch started. Past it, the next batch, in
 * whatever queue, waits for the turn. Where the clock stands still while code
 * runs (deployed Workers advance time only on I/O), the budget never runs
 * out, so on Workers a turn also ends after MAX_BATCHES_PER_TURN batches,
 * under wrangler dev too, so that it behaves there as deployed. Only there: on
 * Node, turning the loop every few cheap batches made a queue of them
 * measurably slower for no gain.
 *
 * Why 4 ms: a turn is not free (a system call, and the runtime's own
 * housekeeping at each turn), so turning after every cheap batch slows a
 * busy queue down; turning rarely leaves new requests unread. With 4 ms, a
 * request that arrives while cheap batches run is read at most 4 ms later:
 * under a load that keeps batches back to back it would wait longer for its
 * own batch anyway. (React's scheduler yields every 5 ms for the same
 * trade.)
 *
 * One turn is not always enough. Node's event loop accepts one new
 * connection per turn, so a server whose turns each run a 70 ms model batch
 * accepts fourteen connections a second: a burst of 64 new clients would
 * wait seconds to be accepted while the requests already read are served in
 * a tenth of that. After a turn whose batches held the thread, the next
 * batch therefore waits about one turn per millisecond held (at most
 * YIELD_TURNS_MAX): idle turns cost microseconds, and each accepts a
 * connection and reads what arrived.
 */
export const TURN_BUDGET_MS = 4
export const MAX_BATCHES_PER_TURN = 16
export const YIELD_TURNS_MAX = 64

import { host } from '#batching-host'

type Callback = () => void
type SetImmediate = (callback: Callback) => unknown

// setImmediate is read from here at each use: test runners swap the timer functions for fakes.
const timers = globalThis as { setImmediate?: SetImmediate }

/** Whether a callback scheduled now is sure to run: Node's setImmediate always runs; on Workers it may be cancelled with its request. */
function callbacksAlwaysRun(): boolean {
  return !host.timersBelongToRequests && timers.setImmediate !== undefined
}

/** The most batches a turn may start: bounded only where time cannot bound it (on Workers). */
const batchesPerTurn = host.clockStandsStill ? MAX_BATCHES_PER_TURN : Infinity

let batchesThisTurn = 0
let turnStartedAt = 0
/** After a turn whose batches held the thread: no batch starts until the loop has turned a few times. */
let yielding = false
/** What waits for the end of that: the queues' pumps. */
const waiting: Callback[] = []

const turn = (): void => {
  const heldMs = performance.now() - turnStartedAt
  batchesThisTurn = 0
  // Only where the turns' callbacks are sure to run (Node): elsewhere a
  // cancelled one would leave every queue waiting for good.
  if (heldMs > TURN_BUDGET_MS && callbacksAlwaysRun()) {
    yielding = true
    macrotaskAfterTurns(Math.min(YIELD_TURNS_MAX, Math.ceil(heldMs)), endYield)
  }
}

// Each waiting pump gets a macrotask of its own: the batch one of them starts
// runs its model on the promise jobs that follow its macrotask, so the next
// pump, in the next macrotask, sees how long that held the thread.
const endYield = (): void => {
  yielding = false
  for (const callback of waiting.splice(0)) macrotask(callback)
}

/** Young: no batch yet this turn, or under the budget (in time, and where the clock stands still, in count). */
function turnIsYoung(): boolean {
  return batchesThisTurn === 0 || (batchesThisTurn < batchesPerTurn && performance.now() - turnStartedAt < TURN_BUDGET_MS)
}

export function noteBatchStarted(): void {
  if (batchesThisTurn++ > 0) return
  turnStartedAt = performance.now()
  macrotask(turn)
}

/** Whether a full batch may start now, on a microtask, or must wait for the event loop to turn. */
export function mayStartBeforeLoopTurns(): boolean {
  return !yielding && turnIsYoung()
}

/**
 * Whether a queue's pump, run by `waitForLoopTurn()`, may start a batch now:
 * while the turn is young and no turns are owed to batches that held the
 * thread. Elsewhere than Node, turn() may never run (see
 * callbacksAlwaysRun), so there a pump waits for one macrotask and nothing
 * else.
 */
export function mayStartAfterLoopTurn(): boolean {
  return (!yielding && turnIsYoung()) || !callbacksAlwaysRun()
}

/**
 * Run a queue's pump once the loop has turned, or, while turns are owed to
 * batches that held the thread, once they have passed: whichever queue it
 * belongs to, one long batch per turn. The pump asks
 * `mayStartAfterLoopTurn()` when it runs, and waits again if it may not.
 */
export function waitForLoopTurn(callback: Callback): void {
  if (yielding) waiting.push(callback)
  else macrotask(callback)
}

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
export function macrotask(callback: Callback): void {
  const setImmediate = timers.setImmediate
  if (setImmediate) setImmediate(callback)
  else setTimeout(callback, 0)
}

/** Run a callback after `turns` turns of Node's event loop, one setImmediate per turn. Node only (see callbacksAlwaysRun). */
function macrotaskAfterTurns(turns: number, callback: Callback): void {
  const setImmediate = timers.setImmediate!
  let left = turns
  const hop = (): void => {
    if (--left <= 0) callback()
    else setImmediate(hop)
  }
  setImmediate(hop)
}
