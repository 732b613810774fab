/**
 * The deadlines of a queue's calls, watched with one timer: armed for the
 * earliest deadline, it fails every call whose deadline has passed and
 * re-arms for the next. A timer per call would cost a timer per call.
 */
export class DeadlineTimer<E> {
  /** Each watched call and its deadline (kept here, so calls without one carry no field for it). */
  private readonly watched = new Map<E, number>()
  private timer: ReturnType<typeof setTimeout> | undefined = undefined
  private timerAt = Infinity
  private readonly sweepTask = (): void => this.sweep()

  constructor(private readonly expire: (entry: E) => void) {}

  watch(entry: E, deadline: number): void {
    this.watched.set(entry, deadline)
    if (deadline < this.timerAt) this.arm(deadline)
  }

  forget(entry: E): boolean {
    // Most calls have no deadline: skip the lookup while none is watched.
    if (this.watched.size === 0 || !this.watched.delete(entry)) return false
    // Nothing left to watch: no timer should keep the process awake.
    if (this.watched.size === 0 && this.timer !== undefined) {
      clearTimeout(this.timer)
      this.timer = undefined
      this.timerAt = Infinity
    }
    return true
  }

  private arm(at: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timerAt = at
    this.timer = setTimeout(this.sweepTask, Math.max(0, at - Date.now()))
  }

  private sweep(): void {
    this.timer = undefined
    this.timerAt = Infinity
    const now = Date.now()
    let next = Infinity
    for (const [entry, deadline] of this.watched) {
      if (deadline <= now) this.expire(entry)
      else if (deadline < next) next = deadline
    }
    if (next !== Infinity && this.watched.size > 0) this.arm(next)
  }
}
