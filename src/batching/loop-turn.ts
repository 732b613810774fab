import { macrotask } from './macrotask.js'

/**
 * Whether a batch has started on this thread since the event loop last
 * turned (read its I/O, ran its timers).
 *
 * A full batch starts on a microtask, so that a lone request does not wait a
 * loop turn. But a model run holds the thread, and everything that follows
 * one on promise jobs follows it without a turn: the next full batch of the
 * same queue, or a pipeline's next stage called with what the last one
 * returned. Thirty-two OCR pages in flight chain their stages that way for
 * seconds; meanwhile no request is read, and a kept-alive connection whose
 * next request sits unread past Node's keep-alive timeout is reset with that
 * request on it. So only the first batch after a turn starts on a microtask;
 * any other waits for the turn, whichever queue it belongs to.
 */
let batchStartedThisTurn = false

const turn = (): void => {
  batchStartedThisTurn = false
}

export function noteBatchStarted(): void {
  if (batchStartedThisTurn) return
  batchStartedThisTurn = true
  macrotask(turn)
}

export function batchStartedSinceLoopTurned(): boolean {
  return batchStartedThisTurn
}
