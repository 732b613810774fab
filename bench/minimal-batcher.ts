/**
 * A reference, not a product: the least a batcher shaped like edgeserve's
 * engine can do per call. Each call gets an object of its own (what lets a
 * call leave the queue on a cancel or a deadline) and a promise; a call
 * joins the newest waiting batch, or begins one, as it arrives; one batch
 * runs at a time (Ray Serve's default `max_concurrent_batches`), the next
 * starting on a promise job once it is done. No cancellation, deadlines,
 * keys, sizes, back-pressure, error isolation, loop-turn budget or
 * statistics.
 *
 * The engine bench runs it beside batch() and DataLoader: the distance from
 * it to DataLoader is what the shape costs, from batch() to it what the
 * features cost.
 */
class Call<T, R> {
  settled = false
  resolve!: (value: R) => void
  reject!: (error: unknown) => void
  constructor(readonly item: T) {}
}

class Batch<T, R> {
  readonly calls: Call<T, R>[] = []
  readonly items: T[] = []
}

export function minimalBatcher<T, R>(handler: (items: T[]) => Promise<R[]>, maxBatchSize: number): (item: T) => Promise<R> {
  const waiting: Batch<T, R>[] = []
  /** The newest waiting batch, which calls join until it is full. */
  let tail: Batch<T, R> | undefined
  let running = false
  let scheduled = false
  const resolved = Promise.resolve()

  /** The running batch is done: the next may start. */
  const next = (): void => {
    running = false
    if (waiting.length > 0) schedule()
  }
  const finish = (batch: Batch<T, R>, results: R[]): void => {
    const { calls } = batch
    for (let i = 0; i < calls.length; i++) {
      calls[i]!.settled = true
      calls[i]!.resolve(results[i]!)
    }
    next()
  }
  const fail = (batch: Batch<T, R>, error: unknown): void => {
    for (const call of batch.calls) call.reject(error)
    next()
  }
  const start = (): void => {
    scheduled = false
    if (running || waiting.length === 0) return
    const batch = waiting.shift()!
    if (batch === tail) tail = undefined
    running = true
    handler(batch.items).then(
      (results) => finish(batch, results),
      (error: unknown) => fail(batch, error),
    )
  }
  const schedule = (): void => {
    if (scheduled) return
    scheduled = true
    void resolved.then(start)
  }

  return (item) => {
    const call = new Call<T, R>(item)
    const promise = new Promise<R>((resolve, reject) => {
      call.resolve = resolve
      call.reject = reject
    })
    if (tail === undefined || tail.calls.length >= maxBatchSize) waiting.push((tail = new Batch<T, R>()))
    tail.calls.push(call)
    tail.items.push(item)
    if (!running) schedule()
    return promise
  }
}
