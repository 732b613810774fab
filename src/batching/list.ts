/**
 * An intrusive doubly linked FIFO.
 *
 * A queued call can leave from the middle (its client disconnects, its
 * deadline passes) and must free its slot at once. Links stored on the entry
 * itself make enqueue, dequeue and removal O(1) with no array copies and no
 * tombstones left behind.
 */
export interface Linked<E> {
  prev: E | undefined
  next: E | undefined
}

export class LinkedQueue<E extends Linked<E>> {
  head: E | undefined = undefined
  tail: E | undefined = undefined
  /** Number of entries. */
  count = 0

  push(entry: E): void {
    entry.prev = this.tail
    entry.next = undefined
    if (this.tail) this.tail.next = entry
    else this.head = entry
    this.tail = entry
    this.count++
  }

  /** Whether `entry` is in this queue: an entry that is not holds no links (remove() clears them). */
  holds(entry: E): boolean {
    return entry.prev !== undefined || entry.next !== undefined || this.head === entry
  }

  remove(entry: E): void {
    if (entry.prev) entry.prev.next = entry.next
    else this.head = entry.next
    if (entry.next) entry.next.prev = entry.prev
    else this.tail = entry.prev
    entry.prev = entry.next = undefined
    this.count--
  }

  shift(): E | undefined {
    const entry = this.head
    if (entry) this.remove(entry)
    return entry
  }
}
