/**
 * Greedy next-token choice from one row of the model's logits.
 */
import { PAD_ID, UNK_ID } from './vocab.js'

/**
 * The id with the largest logit in logits[offset .. offset + vocabSize),
 * skipping <pad> and <unk>, which the model must never emit. Ties go to the
 * lowest id, so the choice is deterministic.
 */
export function argmax(logits: ArrayLike<number>, offset: number, vocabSize: number): number {
  if (offset < 0 || offset + vocabSize > logits.length) {
    throw new RangeError(`argmax: row [${offset}, ${offset + vocabSize}) is outside ${logits.length} logits`)
  }
  let best = -1
  let bestValue = -Infinity
  for (let id = 0; id < vocabSize; id++) {
    if (id === PAD_ID || id === UNK_ID) continue
    const value = logits[offset + id] ?? -Infinity
    if (value > bestValue) {
      bestValue = value
      best = id
    }
  }
  if (best < 0) throw new RangeError('argmax: no finite logit to choose from')
  return best
}
