/**
 * The deadlines of a queue's calls, watched with one timer: armed for the
 * earliest deadline, it fails every call whose deadline has passed and
 * re-arms for the next. A timer per call would cost a timer per call.
 *
 * The watched calls are a linked list of small nodes, each held by its call
 * (`watch()` returns it, `forget()` takes it), not a `Map` keyed by call.
 * A Map that a call is added to and deleted from on every request is
 * rebuilt every few dozen calls, and V8 keeps each outgrown table linked to
 * its successor for the Map's iterators; an outgrown table that was already
 * old kept the calls it held, and every request and batch they reach,
 * alive through minor GCs until the next full one. Served at 64
 * connections, that made the house-price route's minor GCs cost four times
 * the bare JSON route's (bench/limits.md).
 */
import { LinkedQueue, type Linked } from './list.js'

/** A watched call's place on the timer. Removed from the list, it holds no neighbour. */
export class DeadlineWatch<E> implements Linked<DeadlineWatch<E>> {
  prev: DeadlineWatch<E> | undefined = undefined
  next: DeadlineWatch<E> | undefined = undefined
  constructor(
    readonly entry: E,
    readonly deadline: number,
  ) {}
}

export class DeadlineTimer<E> {
  private readonly watched = new LinkedQueue<DeadlineWatch<E>>()
  private timer: ReturnType<typeof setTimeout> | undefined = undefined
  private timerAt = Infinity
  private readonly sweepTask = (): void => this.sweep()

  constructor(private readonly expire: (entry: E) => void) {}

  /** Watch `entry` until `deadline` (a `Date.now()` time); keep what it returns to `forget()` it. */
  watch(entry: E, deadline: number): DeadlineWatch<E> {
    const watch = new DeadlineWatch(entry, deadline)
    this.watched.push(watch)
    if (deadline < this.timerAt) this.arm(deadline)
    return watch
  }

  /** Stop watching; a watch already forgotten, or expired, is left alone. */
  forget(watch: DeadlineWatch<E>): void {
    if (!this.watched.holds(watch)) return
    this.watched.remove(watch)
    // Nothing left to watch: no timer should keep the process awake.
    if (this.watched.count === 0 && this.timer !== undefined) {
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
    const passed: DeadlineWatch<E>[] = []
    for (let watch = this.watched.head; watch !== undefined; watch = watch.next) {
      if (watch.deadline <= now) passed.push(watch)
      else if (watch.deadline < next) next = watch.deadline
    }
    // Expired after the walk: failing a call settles it, which may forget other watches.
    for (const watch of passed) {
      if (!this.watched.holds(watch)) continue
      this.watched.remove(watch)
      this.expire(watch.entry)
    }
    // A call watched while others expired may have armed the timer already, for an earlier deadline.
    if (next < this.timerAt && this.watched.count > 0) this.arm(next)
  }
}
