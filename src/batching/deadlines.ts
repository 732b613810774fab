/**
 * The deadlines of a queue's calls, watched with one timer: armed for the
 * earliest deadline, it fails every call whose deadline has passed and
 * re-arms for the next. One timer per queue rather than one per call.
 */
export class DeadlineTimer<E> {
  /** The calls watched, and their deadlines. Its size tells a queue whose calls carry none that there is nothing to forget. */
  readonly watched = new Map<E, number>()
  private timer: ReturnType<typeof setTimeout> | undefined = undefined
  private timerAt = Infinity

  constructor(private readonly expire: (entry: E) => void) {}

  /** Watch `entry` until `deadline` (a `Date.now()` time). */
  watch(entry: E, deadline: number): void {
    this.watched.set(entry, deadline)
    if (deadline < this.timerAt) this.arm(deadline)
  }

  /** Stop watching; an entry not watched (forgotten, or expired) is left alone. */
  forget(entry: E): void {
    if (!this.watched.delete(entry)) return
    // Nothing left to watch: no timer should keep the process awake.
    if (this.watched.size === 0 && this.timer !== undefined) {
      clearTimeout(this.timer)
      this.timer = undefined
      this.timerAt = Infinity
    }
  }

  private arm(at: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timerAt = at
    this.timer = setTimeout(() => this.sweep(), Math.max(0, at - Date.now()))
  }

  private sweep(): void {
    this.timer = undefined
    this.timerAt = Infinity
    const now = Date.now()
    let next = Infinity
    const passed: E[] = []
    for (const [entry, deadline] of this.watched) {
      if (deadline <= now) passed.push(entry)
      else if (deadline < next) next = deadline
    }
    // Expired after the walk: failing a call settles it, which may forget other entries.
    for (const entry of passed) {
      if (!this.watched.delete(entry)) continue
      this.expire(entry)
    }
    // A call watched while others expired may have armed the timer already, for an earlier deadline.
    if (next < this.timerAt && this.watched.size > 0) this.arm(next)
  }
}
