/**
 * The char-lm model's input: a window of the last CONTEXT_LENGTH token ids,
 * int64 [batch, CONTEXT_LENGTH], named `context`; its output is float32
 * logits [batch, VOCAB_SIZE], named `logits`.
 *
 * Windows are left-padded with PAD_ID. Left padding keeps the most recent
 * character in the last slot for every prompt length, and the model computes
 * each row independently, so prompts of different lengths can share one
 * batch and still get exactly the continuation they would get alone.
 */
import { PAD_ID, encode } from './vocab.js'

/** Must equal `contextLength` in ./model/vocab.json (a unit test checks). */
export const CONTEXT_LENGTH = 16
export const INPUT_NAME = 'context'
export const OUTPUT_NAME = 'logits'

/**
 * Write the window for predicting the token after `ids` into
 * out[offset .. offset + k): the last k ids, left-padded with PAD_ID.
 */
export function contextWindow(ids: readonly number[], out: BigInt64Array, offset = 0, k = CONTEXT_LENGTH): BigInt64Array {
  const start = ids.length - k
  for (let j = 0; j < k; j++) {
    const src = start + j
    out[offset + j] = BigInt(src >= 0 ? (ids[src] ?? PAD_ID) : PAD_ID)
  }
  return out
}

/** The window for predicting the character after `text`, as one int64 row. */
export function encodeContext(text: string): BigInt64Array {
  return contextWindow(encode(text), new BigInt64Array(CONTEXT_LENGTH))
}
