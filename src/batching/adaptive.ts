/**
 * The adaptive batch size (`adaptive: true | { latencyTargetMs }`) of one
 * key's calls: the limit their batches may hold, learned from what those
 * batches cost, instead of `maxBatchSize` as it is. AdaptiveLimits
 * (adaptive-limits.ts) makes one per key, and only a queue with `adaptive`
 * on makes those, so a queue without it runs none of this code.
 *
 * What it assumes, and how it works (docs/architecture.md compares it with
 * BentoML, Clipper and Triton):
 *
 * - The cost of a batch depends on its size (in `batchSizeFn` units) and
 *   changes slowly compared with the time a batch takes: a core taken by
 *   another process, another model, another runtime. Its noise is about the
 *   same factor at every size, and a pause only makes a batch slower. It
 *   learns that cost from the batches it runs, as the mean execution time
 *   per batch on a ladder of sizes (1, 2, 3, 4, 6, 8, 11, 16, ... each
 *   about √2 times the last, up to `maxBatchSize`); a batch counts toward
 *   the size nearest its own. No shape is fitted: the curve may have a knee (a cache that
 *   overflows) or bend upwards (memory bandwidth), and a line `a·n + b`
 *   fits neither.
 * - Under a load that keeps batches back to back, a size n serves
 *   `n / time(n)` items per second per concurrent batch. The limit is the
 *   size with the most items per second among the sizes measured lately, or
 *   the smallest size within 4% of it: a smaller batch answers sooner, and
 *   a few percent is within what a measurement varies by. A new choice is
 *   taken only if it differs from the limit by more than the noise of the
 *   two means allows (see significant()), and once it wins again after more
 *   batches (or if it is faster by 12% or more), so noisy measurements do
 *   not move the limit (without that, a flat curve had the limit wander up
 *   to sizes that only cost latency, and a noisy machine's limit moved
 *   every few batches).
 * - It learns only from what it runs, so it probes: under load (calls wait,
 *   or the last batch filled its limit), every few batches it runs one or
 *   two batches a step above or below the limit (without a latency target,
 *   at most four times a second: where batches take a millisecond, probes
 *   every few batches are a quarter of them, all off the limit), and at once
 *   after the limit moved (in the direction it moved), after a change, or
 *   when a size it has not measured lately is next to the limit. That is
 *   hill climbing on the measured curve; it finds the peak of a curve with
 *   one peak, which is what batching cost curves have.
 * - A change of the curve shows as the limit's own batches off their mean
 *   (by 30%, or three times the noise if more) three times in a row, or
 *   twice if faster (its own batches: those it would have run, at whatever
 *   size the load lands them; a load that does not fill the limit lands
 *   them below it, where the limit is then measured): then every other
 *   size's measurement is dropped and probing starts again from the limit,
 *   so the limit follows within a few dozen batches (within 2 s on a real
 *   clock in the tests). Measurements older than a few seconds and a few
 *   dozen batches are dropped anyway.
 * - A probe is compared with the limit, so the limit is measured first; a
 *   size is never chosen for being the only one measured lately: with slow
 *   batches, or keys that take turns, the limit's measurement can go stale
 *   while a probe runs, and taking the probe's size then climbs to every
 *   size probed.
 * - With `latencyTargetMs`, a call's latency at size n is taken as its wait
 *   for a running batch plus its own batch, `time(n) · (1 + 1/concurrency)`,
 *   plus `batchWaitTimeoutS`; and a size keeps up with the load when it
 *   serves 10% more units per second than arrive (measured from the batches
 *   run and the growth of the queue). The limit is then the best size
 *   (as above) among those that keep up within the target; if none does,
 *   the smallest size that keeps up; if none keeps up, the best size: under
 *   a load beyond what any size serves, serving the most is what helps, and
 *   deadlines and `maxQueuedRequests` refuse the rest. A probe above the
 *   limit is made only where its latency, extrapolated from the limit's,
 *   is within the target, or when the limit does not keep up; one below a
 *   limit within the target only to a size that keeps up with the load.
 * - It never goes below the largest item (units) it has seen: a batch must
 *   be able to hold any admitted call.
 * - A batch that waited out `batchWaitTimeoutS` before it was full shows
 *   that the load fills no more in that time: a batch is then full at what
 *   it held (chosenSize), until one holds more without waiting.
 * - On Cloudflare Workers, deployed, the clock stands still while code runs
 *   and moves on I/O, so a batch timed alone shows the time up to its last
 *   I/O (reading its requests' bodies), not its cost, and it is not zero:
 *   the limit on Workers is `maxBatchSize`, as without `adaptive`, from the
 *   start, under wrangler dev too (whose clock moves) so that it behaves as
 *   deployed. Elsewhere three batches in a row that took no time mean the
 *   same (one may be a coarse clock: browsers round performance.now()).
 * - A batch whose callers all left while it ran is not learned from: it
 *   gave its slot back before the handler finished.
 */

import { host } from '#batching-host'

/** One size of a measured cost curve: the mean milliseconds a batch of `size` units took. */
export interface CostPoint {
  size: number
  ms: number
}

/** Milliseconds from some origin: `performance.now()` unless a test drives it. */
export type Clock = () => number

/** What the adaptive batch size reads from the queue's options, live (setters change them). */
export interface AdaptiveSettings {
  readonly maxBatchSize: number
  readonly maxConcurrentBatches: number
  readonly batchWaitTimeoutS: number
}

/** Sizes within this fraction of the most items/s count as as good: the smaller wins. */
export const TOLERANCE = 0.04
/** Weight of a new call in the mean units per call. */
const WEIGHT = 0.2
/**
 * Weight of a new batch in a size's mean time, once it holds 1 / MEAN_WEIGHT
 * batches (until then, each of its batches counts as much): a mean worth
 * about nine batches, which follows a curve that drifts within a few dozen.
 */
const MEAN_WEIGHT = 0.2
/** Weight of a new batch in the spread: the noise of a machine changes slowly, and a spread read from a few batches varies as much as they do. */
const SPREAD_WEIGHT = 0.02
/** Batches a size needs before it is compared with others (the first run at a new size is often slow). */
const MIN_SAMPLES = 2
/** A size's measurement is forgotten this long after its last batch, and once STALE_BATCHES have run since. */
export const STALE_MS = 3000
/**
 * Batches (of this estimate) a measurement outlives, however long they take:
 * a key whose batches take a second each, or come a few a second between
 * other keys' batches, still compares the limit with both its neighbours,
 * which are probed in turn PROBE_EVERY batches apart.
 */
const STALE_BATCHES = 24
/** Batches at the limit between two probes, while calls are queued. */
export const PROBE_EVERY = 8
/**
 * And milliseconds, at least, between two probes on that schedule: where
 * batches take a millisecond or two, probes PROBE_EVERY batches apart ran a
 * quarter of all batches off the limit (the house-price MLP in a Node
 * server, 400 batches a second: about 10% of its requests a second). A few
 * probes a second keep the sizes next to the limit measured, well within
 * STALE_MS; batches that take 30 ms or more are not held back by it.
 */
const PROBE_GAP_MS = 250
/** Batches a probe gets to measure its size; it ends sooner once the size has MIN_SAMPLES new ones. */
const PROBE_BATCHES = 3
/**
 * A batch is off when its time per unit is at least this much above or
 * below its size's mean (as a factor, 1.3), or CHANGE_SPREADS times the
 * spread of the batches' times if that is more (a noisy machine: a CV of 0.4
 * makes it about 3×); CHANGE_RUN batches off the same way in a row mean the
 * curve changed. One is a pause (garbage collection, another process's
 * burst); two in a row are, at times (a process descheduled across two
 * short batches); three are not, and wait little: a change that matters
 * shows on every batch.
 */
const CHANGE = 0.3
const CHANGE_SPREADS = 3
const CHANGE_RUN = 3
/** Standard errors by which a size must differ from the chosen one to be taken (see significant()). */
const SIGNIFICANCE = 3
/** With a latency target, a size keeps up when it serves this much more than arrives. */
const HEADROOM = 1.1

/** What is known of one size on the ladder. */
interface Measured {
  readonly size: number
  /** Mean units and mean milliseconds of its batches (their ratio is its speed). */
  units: number
  ms: number
  samples: number
  /** Clock time of its last batch. */
  at: number
  /** The estimate's count of batches at its last batch. */
  batch: number
  /** Batches in a row far slower (+) or faster (-) than its mean. */
  off: number
}

/** The batch sizes it measures and chooses from: 1, 2, 3, 4, 6, 8, 11, 16, 23, 32, 45, 64, ... then `max`. */
export function sizeLadder(max: number): number[] {
  const sizes: number[] = []
  for (let exact = 1; exact < max; exact *= Math.SQRT2) {
    const size = Math.round(exact)
    if (size !== sizes.at(-1)) sizes.push(size)
  }
  if (sizes.at(-1) !== max) sizes.push(max)
  return sizes
}

export class AdaptiveBatchSize {
  /** The limit for the next batch: the chosen size, or a probe's (see batchSizeLimit). */
  private next: number
  /** The largest call (units) admitted so far: the limit never goes below it. */
  floor = 1
  /** The chosen size last reported to the queue's observer (AdaptiveLimits keeps it). */
  lastReported: number
  private ladder: Measured[] = []
  private ladderMax = 0
  /** Index of the chosen size in the ladder. */
  private chosen = 0
  private probe: { index: number; left: number; samplesBefore: number } | undefined = undefined
  /** A size that won once: it is measured again, and chosen if it wins again. */
  private pending: number | undefined = undefined
  /**
   * Index of the size the last batch run at the limit (not for a probe)
   * landed on: below the limit where the load does not fill it. 64 HTTP
   * clients of a server on Node, calling again a turn or two apart, make two
   * batches of about 32 in turn, under a limit of 45 or 64.
   */
  private landed: number | undefined = undefined
  /** Index of a size whose last probe the load did not reach (see learn()). */
  private unreached: number | undefined = undefined
  /**
   * The units of the last batch that waited out batchWaitTimeoutS before it
   * was full: the load fills no more in that time, and a batch is full at
   * that many (see chosenSize) until one holds more without waiting.
   */
  private filledInWait: number | undefined = undefined
  private sinceProbe = 0
  /** Clock time the last probe started. */
  private lastProbeAt = Number.NEGATIVE_INFINITY
  private probeUpNext = true
  /** Units arriving per millisecond, and what it is measured from. */
  private arrivalRate = 0
  private unitsPerCall = 1
  private lastAt = Number.NaN
  private lastQueued = 0
  /** Units run since lastAt (batches that end at the same instant count together). */
  private unitsSince = 0
  /** The clock did not move across the last batches (Workers): nothing to learn from. */
  private blind = false
  /** Batches in a row across which the clock did not move. */
  private stillRuns = 0
  /** Batches learned from. */
  private batches = 0
  /** Weighted mean square of ln(a batch's time per unit / its size's mean), over batches not off, and how many it holds. */
  private spread = 0
  private spreadBatches = 0

  constructor(
    private readonly settings: AdaptiveSettings,
    readonly latencyTargetMs: number | undefined,
    readonly now: Clock = () => performance.now(),
    /** The clock stands still while code runs (Workers): nothing here can be timed, so it never learns. */
    readonly frozenClock: boolean = host.clockStandsStill,
    /** The size to start from, before any batch is measured (the ladder's size at or below it): 1 unless told. */
    startAt = 1,
  ) {
    this.rebuild(startAt)
    this.blind = frozenClock
    this.next = frozenClock ? settings.maxBatchSize : this.ladder[this.chosen]!.size
    this.lastReported = this.next
  }

  /** The most units the next batch may hold: the chosen size, or a probe's, within the maxBatchSize in force. */
  get batchSizeLimit(): number {
    return Math.min(this.next, this.settings.maxBatchSize)
  }

  /**
   * A batch is full at the size chosen, or a probe's below it: a probe above
   * it takes more only of the calls queued when its batch starts. Waiting
   * for more would cost each call batchWaitTimeoutS whenever they do not
   * come: a lone caller, whose every batch fills a limit of 1, waited it out
   * on three calls in four.
   */
  get fullBatchSize(): number {
    return Math.min(this.batchSizeLimit, this.chosenSize)
  }

  /** The size chosen now (without a probe): what stats() and the gauge show. */
  get chosenSize(): number {
    if (this.blind) return this.settings.maxBatchSize
    return Math.max(Math.min(this.ladder[this.chosen]!.size, this.filledInWait ?? Infinity), Math.min(this.floor, this.settings.maxBatchSize))
  }

  /** A call of `units` was admitted: the limit must hold it. */
  admitted(units: number): void {
    if (units <= this.floor) return
    this.floor = units
    if (this.next < units) this.next = Math.min(units, this.settings.maxBatchSize)
  }

  /** `maxBatchSize` changed: the ladder is made again, the limit kept where it still fits (or put at `previous`). */
  private rebuild(previous = this.ladder[this.chosen]!.size): void {
    this.ladderMax = this.settings.maxBatchSize
    this.ladder = sizeLadder(this.ladderMax).map((size) => ({ size, units: 0, ms: 0, samples: 0, at: 0, batch: 0, off: 0 }))
    this.chosen = 0
    while (this.chosen + 1 < this.ladder.length && this.ladder[this.chosen + 1]!.size <= previous) this.chosen++
    this.probe = undefined
    this.pending = undefined
    this.landed = undefined
    this.unreached = undefined
    this.filledInWait = undefined
  }

  /**
   * A batch of `units` (in `calls` calls) took `executionMs`; `queuedCalls`
   * calls wait now. Learns from it, and sets the limit for the next batch.
   */
  learn(units: number, calls: number, executionMs: number, queuedCalls: number, waitedOut = false): void {
    if (this.frozenClock) {
      this.next = this.settings.maxBatchSize
      return
    }
    // A size the load does not fill within batchWaitTimeoutS costs each of its calls that wait:
    // after a fall from 64 clients to 7, a limit of 8 had every batch of the house-price example
    // wait out its 0.1 s (68 requests a second). A batch is full at what the load filled in the
    // wait, until one holds more without waiting (the limit lets a batch take what is queued).
    if (waitedOut) this.filledInWait = units
    else if (this.filledInWait !== undefined && units > this.filledInWait) this.filledInWait = undefined
    if (this.settings.maxBatchSize !== this.ladderMax) this.rebuild()
    const now = this.now()
    this.measureLoad(units, calls, queuedCalls, now)
    if (!(executionMs > 0)) {
      // The clock stood still. Once may be a coarse clock (browsers round
      // performance.now()); three times in a row, nothing can be learned here:
      // behave as without adaptive.
      if (++this.stillRuns < 3) return
      this.blind = true
      this.next = this.settings.maxBatchSize
      return
    }
    this.stillRuns = 0
    this.blind = false
    this.batches++
    // A batch that filled its limit had callers enough for a probe, though none wait now: with as
    // many closed-loop callers as the limit, each batch takes them all, and they call again only
    // once it has ended. (Without this, such a load never probed, and never followed a change.)
    const loaded = queuedCalls > 0 || units >= this.next
    const index = this.nearest(units)
    const atLimit = !this.shapedByProbe(units)
    if (atLimit) this.landed = index
    this.record(index, units, executionMs, now, atLimit)

    const probe = this.probe
    if (probe !== undefined) {
      const point = this.ladder[probe.index]!
      // A probe the load did not reach (its batch is one the limit would have run) learns nothing
      // of its size: it ends, and is made again only on the regular schedule, not at once.
      this.unreached = atLimit ? probe.index : undefined
      if (atLimit || --probe.left === 0 || point.samples >= probe.samplesBefore + MIN_SAMPLES) this.probe = undefined
    }
    if (this.probe === undefined) {
      const before = this.chosen
      const { index: choice, forLatency } = this.choose(now)
      if (choice === before || (!forLatency && !this.significant(choice, this.ladder.indexOf(this.limitPoint(now))))) {
        this.pending = undefined
        this.sinceProbe++
      } else if (choice === this.pending || this.clearlyFaster(choice, before, now)) {
        this.pending = undefined
        this.chosen = choice
        // Keep going the way it moved: the next size that way is measured at once.
        this.probeUpNext = choice > before
        this.probeAtOnce()
      } else {
        // One measurement may be noise: the new size is measured again, and taken if it still wins
        // (unless it won by far: climbing from a batch of one, each step up is often 30% faster or more).
        // For the latency target it is measured afresh; for speed its mean keeps what it holds and
        // gains the probe's batches, which narrows the noise significant() allows for.
        this.pending = choice
        const point = this.ladder[choice]!
        if (forLatency) point.samples = 0
        this.sinceProbe = 0
        this.probe = { index: choice, left: PROBE_BATCHES, samplesBefore: point.samples }
      }
      if (this.probe === undefined && loaded) this.startProbe(now)
    }
    const size = this.probe !== undefined ? this.ladder[this.probe.index]!.size : this.ladder[this.chosen]!.size
    this.next = Math.max(size, Math.min(this.floor, this.settings.maxBatchSize))
  }

  /** Whether size `index` serves clearly more than size `than` (by three tolerances): no noise makes that much. */
  private clearlyFaster(index: number, than: number, now: number): boolean {
    const point = this.ladder[index]!
    const other = this.ladder[than]!
    return this.usable(point, now) && this.usable(other, now) && this.speed(point) > this.speed(other) * (1 + 3 * TOLERANCE)
  }

  /**
   * Whether the measurements tell size `index` from the chosen size (`than`,
   * the size its batches land on) beyond their noise: a size above must
   * serve more, and one below no more than TOLERANCE less, by SIGNIFICANCE
   * standard errors of the difference of their means (from the spread of the
   * batches' times, and how many batches each mean holds). On a quiet
   * machine that is any difference, and the limit moves as it did without
   * this; with a CV of 0.2 and both means full it is about 30%, so the limit
   * holds where the sizes next to it serve within the noise of it, instead of
   * following whichever read luckiest last. A curve that changed shows
   * anyway: in a run of the limit's batches off its mean (see record()).
   */
  private significant(index: number, than: number): boolean {
    if (index === than) return true
    const point = this.ladder[index]!
    const other = this.ladder[than]!
    const error = Math.sqrt(this.noise * (1 / this.weightOf(point) + 1 / this.weightOf(other)))
    const gain = Math.log(this.speed(point) / this.speed(other))
    return gain > (index > than ? 0 : -TOLERANCE) + SIGNIFICANCE * error
  }

  /** How many batches a size's mean is worth: its samples, up to what the weighted mean holds at most. */
  private weightOf(point: Measured): number {
    return Math.min(point.samples, (2 - MEAN_WEIGHT) / MEAN_WEIGHT)
  }

  /** Units arriving per millisecond: those run plus the growth of the queue, over the time between batches. */
  private measureLoad(units: number, calls: number, queuedCalls: number, now: number): void {
    if (calls > 0) this.unitsPerCall += WEIGHT * (units / calls - this.unitsPerCall)
    this.unitsSince += units
    if (now <= this.lastAt) return
    if (!Number.isNaN(this.lastAt)) {
      const arrived = this.unitsSince + (queuedCalls - this.lastQueued) * this.unitsPerCall
      this.arrivalRate += 0.3 * (Math.max(0, arrived / (now - this.lastAt)) - this.arrivalRate)
    }
    this.lastAt = now
    this.lastQueued = queuedCalls
    this.unitsSince = 0
  }

  private nearest(units: number): number {
    let best = 0
    let bestDistance = Infinity
    for (let i = 0; i < this.ladder.length; i++) {
      const distance = Math.abs(Math.log(units / this.ladder[i]!.size))
      if (distance < bestDistance) {
        best = i
        bestDistance = distance
      }
    }
    return best
  }

  /**
   * Whether a batch of `units` took its size from the probe it ran under: a
   * probe below the limit cut it there, or one above let it hold more than
   * the limit would. Otherwise it is the batch the limit would have run.
   */
  private shapedByProbe(units: number): boolean {
    if (this.probe === undefined) return false
    return this.next < this.chosenSize ? units >= this.next : units > this.chosenSize
  }

  /** `atLimit`: the batch is one the limit would have run (see shapedByProbe()). */
  private record(index: number, units: number, ms: number, now: number, atLimit: boolean): void {
    const point = this.ladder[index]!
    if (point.samples > 0 && this.stale(point, now)) point.samples = 0
    point.at = now
    point.batch = this.batches
    if (point.samples === 0) {
      Object.assign(point, { units, ms, samples: 1, off: 0 })
      return
    }
    const deviation = Math.log(ms / units / (point.ms / point.units))
    const bound = Math.max(Math.log(1 + CHANGE), CHANGE_SPREADS * Math.sqrt(this.noise))
    const off = deviation > bound ? 1 : deviation < -bound ? -1 : 0
    // The spread is learned from batches within the bound only: a pause, or the curve changing, is not noise.
    if (off === 0 && point.samples >= MIN_SAMPLES) {
      this.spread += SPREAD_WEIGHT * (deviation * deviation - this.spread)
      this.spreadBatches++
    }
    if (off !== 0 && point.samples < MIN_SAMPLES) {
      // Its first batches disagree: one of them was likely paused (a pause only ever slows a batch
      // down), so the faster is its base. Taken into its mean, a pause would make the batches after
      // it read as off, and leave the size looking slow until CHANGE_RUN of them in a row.
      if (off < 0) Object.assign(point, { units, ms })
      point.samples++
      return
    }
    point.off = off === 0 || Math.sign(point.off) !== off ? off : point.off + off
    if (point.off === 0 || point.samples < MIN_SAMPLES) {
      const weight = Math.max(MEAN_WEIGHT, 1 / (point.samples + 1))
      point.units += weight * (units - point.units)
      point.ms += weight * (ms - point.ms)
      point.samples++
    } else if (point.off >= CHANGE_RUN || point.off <= -(CHANGE_RUN - 1)) {
      // Its mean no longer holds: it starts again from this batch. (Batches faster than the mean
      // need one fewer in a row: a pause never makes a batch faster, so they show a mean that
      // pauses inflated, or a curve that got faster.)
      Object.assign(point, { units, ms, samples: MIN_SAMPLES, off: 0 })
      if (atLimit) {
        // The limit's own batches show that the curve changed, at whatever size the load made
        // them land: what was measured of the other sizes no longer holds, and the search starts
        // again from the limit. (Watching only the limit's size, a limit of 64 whose batches
        // landed on 23 and 45 held for seconds after the best size became 1, or for good.)
        for (const other of this.ladder) if (other !== point) other.samples = 0
        this.probe = undefined
        this.pending = undefined
        this.probeAtOnce()
      }
    }
    // A batch far off its size's mean is left out of it (a pause for garbage
    // collection, another process's burst) until a run of them confirms it.
  }

  /**
   * Where the limit is measured: at its own size, or, while no batch lands
   * there lately because the load does not fill it, where its batches last
   * landed. (Requiring its own size, such a limit never probed, and never
   * moved once the curve changed.)
   */
  private limitPoint(now: number): Measured {
    const own = this.ladder[this.nearest(this.chosenSize)]!
    return this.usable(own, now) || this.landed === undefined ? own : this.ladder[this.landed]!
  }

  private usable(point: Measured, now: number): boolean {
    return point.samples >= MIN_SAMPLES && !this.stale(point, now)
  }

  private stale(point: Measured, now: number): boolean {
    return now - point.at > STALE_MS && this.batches - point.batch > STALE_BATCHES
  }

  /** Items per millisecond the queue serves at this size, all its concurrent batches together. */
  private capacity(point: Pick<Measured, 'units' | 'ms'>): number {
    return (this.settings.maxConcurrentBatches * point.units) / point.ms
  }

  /** A call's latency at this size: a wait for a running batch, its own batch, and the configured wait. */
  private latency(ms: number): number {
    return ms * (1 + 1 / this.settings.maxConcurrentBatches) + this.settings.batchWaitTimeoutS * 1000
  }

  /** The best of `points` (ascending): the most items/s, or the smallest within TOLERANCE of it. */
  private best(points: Measured[]): Measured {
    let most = 0
    for (const point of points) most = Math.max(most, point.units / point.ms)
    return points.find((point) => point.units / point.ms >= most * (1 - TOLERANCE))!
  }

  /** The index of the size to use, from the sizes measured lately, and whether the latency target chose it over the fastest. */
  private choose(now: number): { index: number; forLatency: boolean } {
    // A size is chosen over the limit only when compared with it: until the limit itself is
    // measured (at first, or after a change), a probe's size alone says nothing of which is faster.
    // (The limit's batches land on the size nearest it: above the chosen size when calls are larger.)
    if (!this.usable(this.limitPoint(now), now)) return { index: this.chosen, forLatency: false }
    const known = this.ladder.filter((point) => this.usable(point, now))
    const fastest = this.best(known)
    let choice = fastest
    const target = this.latencyTargetMs
    if (target !== undefined && this.latency(choice.ms) > target) {
      const need = this.arrivalRate * HEADROOM
      const keepUp = known.filter((point) => point.size <= choice.size && this.capacity(point) >= need)
      const within = keepUp.filter((point) => this.latency(point.ms) <= target)
      if (within.length > 0) choice = this.best(within)
      else if (keepUp.length > 0) choice = keepUp[0]!
    }
    return { index: this.ladder.indexOf(choice), forLatency: choice !== fastest }
  }

  /**
   * The next size up (`direction` 1) or down (-1) from `index` that a batch
   * can tell apart from it: batches hold whole calls, so with calls of up to
   * `floor` units the sizes must differ by at least that much. Undefined
   * past either end.
   */
  private step(index: number, direction: 1 | -1): number | undefined {
    const from = this.ladder[index]!.size
    for (let i = index + direction; i >= 0 && i < this.ladder.length; i += direction) {
      const size = this.ladder[i]!.size
      if (direction === -1 && size < this.floor) return undefined
      if (Math.abs(size - from) >= this.floor || i === this.ladder.length - 1) return i
    }
    return undefined
  }

  /**
   * Maybe start a probe: of a size next to the chosen one, or of the size
   * above the fastest one measured when nothing above that is known (the
   * speed may still be rising there, though by less than TOLERANCE a step).
   */
  private startProbe(now: number): void {
    // A probe is compared with the limit: the limit is measured first.
    if (!this.usable(this.limitPoint(now), now)) return
    const upIndex = this.step(this.chosen, 1)
    const up = upIndex !== undefined && this.mayProbeUp(upIndex, now) ? upIndex : undefined
    const downIndex = this.step(this.chosen, -1)
    const down = downIndex !== undefined && this.mayProbeDown(downIndex, now) ? downIndex : undefined
    const unknown = (index: number | undefined) => index !== undefined && index !== this.unreached && !this.usable(this.ladder[index]!, now)
    // Only where the speed rose noticeably from the chosen size to the peak: a curve that rises by a percent a step is flat enough.
    const peak = this.peak(now)
    const chosen = this.ladder[this.chosen]!
    const rising = peak !== undefined && peak > this.chosen && this.speed(this.ladder[peak]!) > this.speed(chosen) * (1 + TOLERANCE / 2)
    const abovePeak = rising ? this.step(peak, 1) : undefined
    let index: number | undefined
    if (unknown(abovePeak) && this.mayProbeUp(abovePeak!, now)) index = abovePeak
    else if (this.sinceProbe >= PROBE_EVERY && this.scheduleAllows(now)) {
      index = this.probeUpNext ? (up ?? down) : (down ?? up)
      this.probeUpNext = index === down
    } else if (unknown(up)) index = up
    else if (unknown(down)) index = down
    if (index === undefined) return
    this.sinceProbe = 0
    this.lastProbeAt = now
    const point = this.ladder[index]!
    this.probe = { index, left: PROBE_BATCHES, samplesBefore: this.usable(point, now) ? point.samples : 0 }
  }

  /** The next batch that may probe does, without waiting for the schedule (PROBE_EVERY, PROBE_GAP_MS). */
  private probeAtOnce(): void {
    this.sinceProbe = PROBE_EVERY
    this.lastProbeAt = Number.NEGATIVE_INFINITY
  }

  /**
   * The variance of ln(a batch's time) about its size's mean: how noisy this
   * machine's batches are. The weighted mean starts from 0, so it is divided
   * by the weight its batches hold so far: the first few read as the noise.
   */
  private get noise(): number {
    return this.spreadBatches === 0 ? 0 : this.spread / (1 - (1 - SPREAD_WEIGHT) ** this.spreadBatches)
  }

  /** Units per millisecond at this size (0 where it has not been measured lately). */
  private speed(point: Measured): number {
    return point.samples === 0 ? 0 : point.units / point.ms
  }

  /** The index of the size with the most items/s measured lately. */
  private peak(now: number): number | undefined {
    let peak: number | undefined
    let most = 0
    for (let i = 0; i < this.ladder.length; i++) {
      const point = this.ladder[i]!
      if (!this.usable(point, now) || point.units / point.ms <= most) continue
      most = point.units / point.ms
      peak = i
    }
    return peak
  }

  /**
   * With a latency target, a probe above the limit is made only where its
   * latency, extrapolated from the limit's (time grows at most in
   * proportion to size past the first few), stays within the target, or
   * where the limit does not keep up with the load anyway.
   */
  private mayProbeUp(index: number, now: number): boolean {
    const target = this.latencyTargetMs
    if (target === undefined) return true
    const current = this.ladder[this.chosen]!
    if (!this.usable(current, now)) return true
    if (this.capacity(current) < this.arrivalRate * HEADROOM) return true
    const next = this.ladder[index]!
    const ms = this.usable(next, now) ? next.ms : (current.ms * next.size) / current.units
    return this.latency(ms) <= target
  }

  /**
   * Whether PROBE_GAP_MS has passed since the last probe, or needs not:
   * with a latency target, probes keep the limit within it as the load
   * moves, not only the curve, and a limit that stopped keeping up must
   * find out within a few batches (held back a quarter of a second, a limit
   * of 2 that fell behind 250 calls/s grew the queue to 23 calls).
   */
  private scheduleAllows(now: number): boolean {
    return this.latencyTargetMs !== undefined || now - this.lastProbeAt >= PROBE_GAP_MS
  }

  /**
   * With a latency target, a probe below a limit that meets it is made only
   * to a size that keeps up with the load: measured so, or at worst (a batch
   * as long as the limit's) so. A size that does not grows the queue while
   * it is probed, and the queue is what the slowest calls wait in.
   */
  private mayProbeDown(index: number, now: number): boolean {
    const target = this.latencyTargetMs
    const current = this.ladder[this.chosen]!
    if (target === undefined || !this.usable(current, now) || this.latency(current.ms) > target) return true
    const next = this.ladder[index]!
    const need = this.arrivalRate * HEADROOM
    if (this.usable(next, now)) return this.capacity(next) >= need
    return this.capacity({ units: next.size, ms: current.ms }) >= need
  }

  /** For the dashboard and tests: the sizes measured lately, with their mean time per batch. */
  curve(): CostPoint[] {
    const now = this.now()
    return this.ladder.filter((point) => this.usable(point, now)).map((point) => ({ size: point.size, ms: (point.ms * point.size) / point.units }))
  }

  /** Whether the last batch could be timed (false where the clock stands still while code runs). */
  get measuring(): boolean {
    return !this.blind
  }
}
