import { batch, deployment } from 'edgeserve'
import { parseNumber } from '../adder/batch-adder.js'

/**
 * Ray Serve's earlier batching tutorial: one deployment queried both over HTTP and through a handle. A
 * `batchKey` on the call's origin guarantees that a batch never mixes the
 * two, and the batched method knows which origin its batch came from
 * (Ray's `serve.context.web`).
 */
export class OriginAwareAdder {
  /** Each batch's origin and size, oldest first (the last 1,000). */
  private readonly history: { origin: string; size: number }[] = []

  handleBatch = batch(
    async (numbers: number[], info) => {
      console.log(`Current context is ${info.key === 'http' ? 'web' : 'python'}`)
      console.log(`Our input array has shape: (${numbers.length},)`)
      this.history.push({ origin: info.key ?? 'unknown', size: numbers.length })
      if (this.history.length > 1000) this.history.shift()
      await new Promise((resolve) => setTimeout(resolve, this.workMs))
      return numbers.map((n) => n + 1)
    },
    { maxBatchSize: 4, batchKey: (_number, context) => context.origin ?? 'handle' },
  )

  constructor(private readonly workMs = 5) {}

  async fetch(request: Request): Promise<string> {
    return String(await this.handleBatch(parseNumber(new URL(request.url).searchParams.get('number'))))
  }

  /** The batches seen so far: callable through a handle. */
  batches(): { origin: string; size: number }[] {
    return [...this.history]
  }
}

export const originAdder = deployment(OriginAwareAdder)
