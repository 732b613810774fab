/**
 * What the adaptive batch size measures where the clock stands still while
 * code runs (workerd moves it only on I/O: a request arriving, a body read,
 * a fetch answered), so a batch's own run cannot be timed: the units served
 * over the clock time of several batches in a row at one limit. Those
 * batches span I/O events (each batch's callers arrived by I/O), so the
 * clock has moved across them by about the real time they took, queueing
 * and answering included: under a load that keeps batches back to back,
 * that is the items per second the limit serves, which is what the limit
 * is chosen for.
 */

/** Batches at one limit that make one measurement. */
export const WINDOW_BATCHES = 4

/** One window, as one batch of mean size `units` that took `ms`: its units over its time are its units per millisecond. */
export interface WindowSample {
  units: number
  ms: number
}

export class ThroughputWindow {
  private start = Number.NaN
  private units = 0
  private batches = 0

  /**
   * The limit changed: the next window starts when the first batch at the
   * new limit ends. Not now: the clock read now may not have moved since
   * before the last batch at the old limit ran (it moves on I/O), and a
   * window that holds its time measures the old limit.
   */
  restart(): void {
    this.start = Number.NaN
  }

  private reset(now: number): void {
    this.start = now
    this.units = 0
    this.batches = 0
  }

  /**
   * A batch of `units` ended at `now`. Returns the window's measurement once
   * it holds WINDOW_BATCHES batches (with `ms` 0 if the clock has not moved
   * across them: nothing to learn), and starts the next.
   */
  add(units: number, now: number): WindowSample | undefined {
    if (Number.isNaN(this.start)) {
      // Its time may hold the last batch before it: it only starts the window.
      this.reset(now)
      return undefined
    }
    this.units += units
    if (++this.batches < WINDOW_BATCHES) return undefined
    const sample = { units: this.units / this.batches, ms: (now - this.start) / this.batches }
    this.reset(now)
    return sample
  }
}
