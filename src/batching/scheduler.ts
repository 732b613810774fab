/**
 * When a batch starts. Per queue, a Scheduler: a full batch at once, a
 * partial one after this round of I/O or its wait, within the queue's
 * concurrency slots, or on the stride's ticks. Per thread, the event loop's
 * turns, which every queue of the thread shares (the second half of this
 * file): batches that hold the thread let the loop turn between them.
 */
import { host } from '#batching-host'
import { requestContext, type AmbientContext } from './context.js'
import type { Batch, BatchRunner, Bucket } from './calls.js'
import { failUnsettled } from './item-errors.js'
import type { BatchSizeLimits } from './limits.js'
import type { ResolvedBatchOptions } from './options.js'

/** A batch as its observer sees it: its calls, and when it started. */
export interface ObservedBatch {
  /** Each call's `batchSizeFn` units, and when it was admitted (performance.now(); 0 if before the observer was attached). */
  readonly entries: readonly { readonly size: number; readonly enqueuedAt: number }[]
  /** performance.now() when the batch started. */
  readonly startedAt: number
}

/**
 * Watches a queue for metrics and logs. Calls are synchronous and cheap to
 * skip: without an observer the queue does no timing at all.
 */
export interface QueueObserver {
  /** A batch started: each of its calls waited from its `enqueuedAt` to the batch's `startedAt`. */
  batchStarted(batch: ObservedBatch): void
  /** Every call of the batch has its answer, at `now` (performance.now()). */
  batchFinished(batch: ObservedBatch, now: number): void
  /** With `adaptive`: the batch size it chose (for the calls of `key`, with a batchKey or model id) moved from `from` to `to`. */
  limitChanged?(from: number, to: number, key: string | undefined): void
}

/** What a scheduler starts batches from: its queue's waiting calls, by key. */
export interface WaitingCalls<T, R> {
  readonly options: ResolvedBatchOptions<T>
  readonly limits: BatchSizeLimits
  readonly observer: QueueObserver | undefined
  /** Calls waiting to be batched. */
  readonly queued: number
  /** The calls of each key, in their batches; the unkeyed bucket is always there. */
  readonly buckets: ReadonlyMap<string | undefined, Bucket<T, R>>
  readonly unkeyed: Bucket<T, R>
  /** Take the oldest batch of `bucket` out of the queue to run, at most `limit` units; undefined if none of its calls waits any more. */
  takeOldest(bucket: Bucket<T, R>, limit: number): Batch<T, R> | undefined
}

/** The context of a batch whose calls name no model. */
const NO_MODEL: AmbientContext = Object.freeze({ origin: 'batch' })

/**
 * Decides when a queue's next batch starts, and runs it: one `pump()` that
 * asks "may a batch start now?", triggered by arrivals (one macrotask per
 * burst, so calls that arrive in the same round of I/O share a batch), by
 * finished batches and by the one wait timer, or, with `strideS`, only by
 * the stride ticker.
 */
export class Scheduler<T, R> {
  /** Batches running now: each holds one of the `maxConcurrentBatches` slots. */
  inFlight = 0
  /** Batches started so far. */
  batchesRun = 0
  /** A pump waits for the event loop to turn: no other is needed until it runs. */
  private pumpScheduled = false
  /** A full batch's start waits on a microtask: no other start is needed until it runs. */
  private fullBatchScheduled = false

  // The pump as the event loop, a microtask and the stride's ticker run it:
  // fields made once, not arrows written inside schedule().
  // perf: engine_vs_dataloader, about 5% of its calls/s: schedule() runs for
  // every admitted call, and an arrow inside it would make each call allocate
  // a context for `this`.
  private readonly pumpAfterTurn = (): void => {
    this.pumpScheduled = false
    // Elsewhere than Node, turn() may never run (see callbacksAlwaysRun): there the macrotask waited is enough.
    if (turnHasRoom() || !callbacksAlwaysRun()) return this.pump()
    // The turn is already old, or batches held the thread: wait for the loop again.
    this.pumpScheduled = true
    waitForLoopTurn(this.pumpAfterTurn)
  }
  private readonly pumpFullBatch = (): void => {
    this.fullBatchScheduled = false
    this.pump()
  }
  private readonly pumpOnTick = (): void => this.pump()
  /**
   * The batch being formed: when its wait began (a slot was free for it and
   * it was not full), the wait it began with, and with a fixed size the
   * limit it began with. As in Ray Serve, setMaxBatchSize and
   * setBatchWaitTimeoutS apply from the next batch to form; the one forming
   * keeps what it started with (see BatchSizeLimits.heldWhileForming).
   */
  private forming: { since: number; waitMs: number; heldLimit: number | undefined } | undefined = undefined
  /** The next batch to form starts without its wait (see startNextBatchNow). */
  private nextWithoutWait = false
  private waitTimer: ReturnType<typeof setTimeout> | undefined = undefined
  private strideTimer: ReturnType<typeof setInterval> | undefined = undefined

  constructor(
    private readonly queue: WaitingCalls<T, R>,
    private readonly runner: BatchRunner<T, R>,
  ) {}

  /**
   * Something changed (a call joined `bucket`, a batch ended, a setting
   * changed): schedule a start if one may happen. Nothing can start while
   * every concurrency slot is taken or a start is already scheduled: the
   * batch that frees a slot schedules again, so a wait starts when a slot
   * frees, not before.
   */
  schedule(bucket?: Bucket<T, R>): void {
    const { options } = this.queue
    if (this.inFlight >= options.maxConcurrentBatches || this.fullBatchScheduled) return
    // Under strideS, batches start only on the stride's ticks.
    if (options.strideS > 0) {
      this.strideTimer ??= setInterval(this.pumpOnTick, options.strideS * 1000)
      return
    }
    // A call's arrival can only have filled its own bucket.
    const full = bucket !== undefined ? bucket.holdsFullBatch(this.forming?.heldLimit) : this.anyBucketFull()
    // A full batch has nothing to wait for: start it on a microtask, unless
    // batches have held the thread long enough since the event loop last
    // turned (see below). A partial one waits for the end of this round of
    // I/O, so that requests that arrived together share it.
    if (full && turnHasRoom()) {
      this.fullBatchScheduled = true
      queueMicrotask(this.pumpFullBatch)
      return
    }
    if (this.pumpScheduled) return
    this.pumpScheduled = true
    waitForLoopTurn(this.pumpAfterTurn)
  }

  /** Whether any bucket holds a full batch (by the limit a forming batch holds, else by its key's). */
  private anyBucketFull(): boolean {
    for (const bucket of this.queue.buckets.values()) if (bucket.holdsFullBatch(this.forming?.heldLimit)) return true
    return false
  }

  private pump(): void {
    const { queue } = this
    const { options } = queue
    while (this.inFlight < options.maxConcurrentBatches && queue.queued > 0) {
      // Without batch keys or model ids there is one bucket to choose from.
      const bucket = queue.buckets.size === 1 ? queue.unkeyed : this.nextBucket()
      // The most units its next batch may hold: the forming batch's own, else its key's limit.
      const limit = this.forming?.heldLimit ?? bucket.limit.batchSizeLimit
      let waitedOut = false
      if (!bucket.holdsFullBatch(this.forming?.heldLimit) && (!options.allowSmallBatch || options.batchWaitTimeoutS > 0 || this.forming)) {
        // A partial batch with a free slot: it forms from now, with the
        // settings in force now.
        const now = Date.now()
        const forming = (this.forming ??= {
          since: now,
          waitMs: this.nextWithoutWait ? 0 : options.batchWaitTimeoutS * 1000,
          heldLimit: queue.limits.heldWhileForming ? limit : undefined,
        })
        if (!options.allowSmallBatch) break
        const due = forming.since + forming.waitMs
        waitedOut = forming.waitMs > 0
        if (now < due) {
          // Under strideS the next tick looks again; otherwise one timer.
          if (options.strideS === 0 && this.waitTimer === undefined) {
            this.waitTimer = setTimeout(() => {
              this.waitTimer = undefined
              this.pump()
            }, due - now)
          }
          break
        }
      }
      // start() sees its batch through, failing what the runner left unanswered: nothing awaits it.
      void this.start(bucket, limit, waitedOut)
    }
    if (queue.queued === 0 && this.strideTimer !== undefined) {
      clearInterval(this.strideTimer)
      this.strideTimer = undefined
    }
  }

  /** Full buckets first: a full batch starts at once. Among equals, the one whose oldest batch was begun first. */
  private nextBucket(): Bucket<T, R> {
    let best: Bucket<T, R> | undefined
    let bestFull = false
    for (const bucket of this.queue.buckets.values()) {
      if (bucket.batches.length === 0) continue
      const full = bucket.holdsFullBatch(this.forming?.heldLimit)
      if (!best || (full && !bestFull) || (full === bestFull && bucket.batches[0]!.sequence < best.batches[0]!.sequence)) {
        best = bucket
        bestFull = full
      }
    }
    return best!
  }

  /**
   * The calls waiting now are not to wait for more: until the queue is
   * empty, a batch that forms starts at the end of its round of I/O rather
   * than after its wait. For callers whose answers are held until these
   * calls' are ready: the items of a call into a Durable Object that a
   * Worker isolate carried together, answered once all of them are. A queue
   * without `allowSmallBatch` still waits for a full batch.
   */
  startNextBatchNow(): void {
    this.nextWithoutWait = true
    const { forming } = this
    if (forming === undefined) return
    forming.waitMs = 0
    if (this.waitTimer !== undefined) {
      clearTimeout(this.waitTimer)
      this.waitTimer = undefined
    }
    this.schedule()
  }

  /** Every call of the queue left or joined a running batch: none waits. */
  queueEmptied(): void {
    this.nextWithoutWait = false
    this.stopForming()
  }

  /** No batch forms any more: it started, or every call of the queue left. */
  stopForming(): void {
    this.forming = undefined
    if (this.waitTimer !== undefined) {
      clearTimeout(this.waitTimer)
      this.waitTimer = undefined
    }
  }

  /**
   * Start the oldest batch of a bucket, made to hold at most `limit` units,
   * and see it through: once its runner is done, every call it holds has
   * its answer, and its slot is given back. `waitedOut`: it starts because
   * batchWaitTimeoutS ran out before it was full.
   */
  private async start(bucket: Bucket<T, R>, limit: number, waitedOut = false): Promise<void> {
    if (this.forming !== undefined) this.stopForming()
    const batch = this.queue.takeOldest(bucket, limit)
    if (batch === undefined) return
    batch.waitedOut = waitedOut
    if (this.queue.queued === 0) this.nextWithoutWait = false
    this.inFlight++
    this.batchesRun++
    noteBatchStarted()
    const { limits, observer } = this.queue
    limits.batchStarted?.(batch)
    if (observer !== undefined) {
      batch.startedAt = performance.now()
      observer.batchStarted(batch)
    }
    // A batch serves many calls, so its handler runs in the batch's own
    // context (its model id, if any), never in the context of whichever
    // request's code happened to start it.
    const modelId = batch.bucket.modelId
    const context = modelId === undefined ? NO_MODEL : { origin: 'batch' as const, multiplexedModelId: modelId }
    let failure: unknown
    try {
      await requestContext.run(context, this.runner, batch)
    } catch (error) {
      failure = error
    }
    // A runner must settle every entry; if it did not, fail the rest here so
    // that every admitted call still settles exactly once.
    if (batch.live > 0) failUnsettled(batch.entries, failure ?? new Error('the batch ended without a result for this item'))
    this.release(batch)
  }

  /** Give a running batch's concurrency slot back (once): none of its callers waits any more. */
  release(batch: Batch<T, R>): void {
    if (batch.released) return
    batch.released = true
    // A batch is done for its callers once the last of them has its answer.
    const { observer } = this.queue
    if (observer !== undefined && batch.startedAt > 0) observer.batchFinished(batch, performance.now())
    this.inFlight--
    this.queue.limits.batchEnded?.(batch)
    if (this.queue.queued > 0) this.schedule()
  }
}

// --- The event loop's turns, shared by every queue of the thread ------------

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

/**
 * Whether a batch may start in this turn of the event loop, or must wait for
 * it to turn: no turns are owed to batches that held the thread, and the
 * turn is young (no batch yet, or under the budget: in time, and where the
 * clock stands still, in count).
 */
function turnHasRoom(): boolean {
  if (yielding) return false
  return batchesThisTurn === 0 || (batchesThisTurn < batchesPerTurn && performance.now() - turnStartedAt < TURN_BUDGET_MS)
}

function noteBatchStarted(): void {
  if (batchesThisTurn++ > 0) return
  turnStartedAt = performance.now()
  macrotask(turn)
}

/**
 * Run a queue's pump once the loop has turned, or, while turns are owed to
 * batches that held the thread, once they have passed: whichever queue it
 * belongs to, one long batch per turn. The pump asks `turnHasRoom()` when
 * it runs, and waits again if it may not start a batch.
 */
function waitForLoopTurn(callback: Callback): void {
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
