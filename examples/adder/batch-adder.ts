import { HTTPError, batch, deployment } from 'edgeserve'

/**
 * Ray Serve's batching tutorial in TypeScript: a vectorized
 * "add one" whose batched method sees up to four numbers at a time.
 */
export class BatchAdder {
  /**
   * `workMs` stands in for a model's compute time (the tutorial's "sleep for
   * 200ms"): while a batch works, new requests queue up and form the next,
   * larger batch. The default, 0, is a pure add.
   */
  constructor(readonly options: { workMs?: number } = {}) {}

  handleBatch = batch(
    async (numbers: number[]) => {
      console.log(`Our input array has shape: (${numbers.length},)`)
      if (this.options.workMs) await new Promise((resolve) => setTimeout(resolve, this.options.workMs))
      return numbers.map((n) => n + 1)
    },
    { maxBatchSize: 4 },
  )

  async fetch(request: Request): Promise<string> {
    const number = parseNumber(new URL(request.url).searchParams.get('number'))
    return String(await this.handleBatch(number))
  }
}

/** The query parameter `number`: an integer, safely inside float64's exact range. */
export function parseNumber(text: string | null): number {
  if (text === null) throw new HTTPError(400, 'missing query parameter "number", e.g. /adder?number=3')
  if (!/^-?\d{1,15}$/.test(text.trim())) {
    throw new HTTPError(400, `query parameter "number" must be an integer of at most 15 digits, received ${JSON.stringify(text.slice(0, 40))}`)
  }
  return Number(text)
}

export const adder = deployment(BatchAdder)
