import { BatchHandlerError, FailedItemsError } from '../errors.js'
import type { Batch, BatchInfo } from './calls.js'
import { failNamedItems, failUnsettled } from './item-errors.js'
import { yieldToEventLoop } from './yield.js'
import { deliverStep, type StreamStep } from './stream.js'

/**
 * One step of continuous batching: advance every active item by one step and
 * return one output per item (a partial, an Error, or `endOfStream` when that
 * item is finished). Items are the callers' own objects, so a step may keep
 * per-sequence state in them (the tokens generated so far).
 */
export type ContinuousStep<T, R> = (items: T[], info: BatchInfo) => Promise<StreamStep<R>> | StreamStep<R>

/**
 * Iteration-level batching: between two steps, finished items leave and
 * waiting calls join, up to `maxBatchSize` active. A short request is never
 * held behind a long one, unlike `batch.stream`, whose batch is fixed when it
 * starts. The loop holds one concurrency slot while anything is active.
 */
export function continuousRunner<T, R>(step: ContinuousStep<T, R>) {
  return async (batch: Batch<T, R>): Promise<void> => {
    const { queue } = batch
    const { limits } = queue
    let active = batch.entries.slice()
    for (let iteration = 0; ; iteration++) {
      // Between steps, let new requests arrive so that they can join.
      if (iteration > 0) await yieldToEventLoop()
      if (batch.released) return
      let used = 0
      for (const entry of active) used += entry.size
      const joined = queue.join(batch, batch.bucket.limit.batchSizeLimit - used)
      if (joined > 0) active.push(...batch.entries.slice(-joined))
      active = active.filter((entry) => !entry.settled)
      if (active.length === 0) return
      batch.compact()

      let outputs: StreamStep<R>
      // With `adaptive`, the cost that depends on the batch size is a step's, not a whole run's.
      const stepEnded = limits.stepStarted?.(batch)
      try {
        outputs = await step(
          active.map((entry) => entry.item),
          batch.infoFor(active),
        )
        stepEnded?.(active)
      } catch (error) {
        // Items the step names fail alone; the others take the step again.
        if (error instanceof FailedItemsError) failNamedItems(error, active)
        else failUnsettled(active, error)
        continue
      }
      if (!Array.isArray(outputs) || outputs.length !== active.length) {
        const got = Array.isArray(outputs) ? `${outputs.length} outputs` : typeof outputs
        failUnsettled(
          active,
          new BatchHandlerError(
            `the continuous step returned ${got} for ${active.length} active items; ` +
              'it must return one output (or Error, or endOfStream) per item, in order',
          ),
        )
        continue
      }
      deliverStep(active, outputs)
    }
  }
}
