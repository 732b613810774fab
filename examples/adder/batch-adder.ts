import { batch } from 'edgeserve'

/**
 * The Ray Serve batching tutorial's BatchAdder: a vectorized "add one" whose
 * batched method sees up to four numbers at a time.
 */
export class BatchAdder {
  handleBatch = batch(
    async (numbers: number[]) => {
      console.log(`Our input array has shape: (${numbers.length},)`)
      return numbers.map((n) => n + 1)
    },
    { maxBatchSize: 4 },
  )
}
