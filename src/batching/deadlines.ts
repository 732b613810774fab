/**
 * The deadlines of a queue's calls, watched with one timer: armed for the
 * earliest deadline, it fails every call whose deadline has passed and
 * re-arms for the next. A timer per call would cost a timer per call.
 */
export class DeadlineTimer<E extends { readonly deadline: number | undefined }> {
  private readonly watched = new Set<E>()
  private timer: ReturnType<typeof setTimeout> | undefined = undefined
  private timerAt = Infinity
  private readonly sweepTask = (): void => this.sweep()

  constructor(private readonly expire: (entry: E) => void) {}

  watch(entry: E, deadline: number): void {
    this.watched.add(entry)
    if (deadline < this.timerAt) this.arm(deadline)
  }

  forget(entry: E): void {
    this.watched.delete(entry)
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
    this.timer = setTimeout(this.sweepTask, Math.max(0, at - Date.now()))
  }

  private sweep(): void {
    this.timer = undefined
    this.timerAt = Infinity
    const now = Date.now()
    let next = Infinity
    for (const entry of this.watched) {
      const deadline = entry.deadline!
      if (deadline <= now) this.expire(entry)
      else if (deadline < next) next = deadline
    }
    if (next !== Infinity && this.watched.size > 0) this.arm(next)
  }
}
