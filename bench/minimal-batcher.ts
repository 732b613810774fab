/**
 * A reference, not a product: the least a batcher shaped like edgeserve's
 * engine can do per call. Each call gets an object of its own (what lets a
 * call leave the queue on a cancel or a deadline) and a promise, calls join
 * the open batch, a full batch starts at once and a partial one on a promise
 * job. No cancellation, deadlines, keys, sizes, back-pressure, error
 * isolation, concurrency limit or statistics.
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

export function minimalBatcher<T, R>(handler: (items: T[]) => Promise<R[]>, maxBatchSize: number): (item: T) => Promise<R> {
  let calls: Call<T, R>[] = []
  let items: T[] = []
  let scheduled = false
  const resolved = Promise.resolve()
  const run = async (batch: Call<T, R>[], batchItems: T[]): Promise<void> => {
    try {
      const results = await handler(batchItems)
      for (let i = 0; i < batch.length; i++) {
        batch[i]!.settled = true
        batch[i]!.resolve(results[i]!)
      }
    } catch (error) {
      for (const call of batch) call.reject(error)
    }
  }
  const start = (): void => {
    scheduled = false
    if (calls.length === 0) return
    const batch = calls
    const batchItems = items
    calls = []
    items = []
    void run(batch, batchItems)
  }
  return (item) => {
    const call = new Call<T, R>(item)
    const promise = new Promise<R>((resolve, reject) => {
      call.resolve = resolve
      call.reject = reject
    })
    calls.push(call)
    items.push(item)
    if (calls.length >= maxBatchSize) start()
    else if (!scheduled) {
      scheduled = true
      void resolved.then(start)
    }
    return promise
  }
}
