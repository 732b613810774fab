/**
 * Reference greedy decode loop for the char-lm ONNX model, used by verify.ts
 * and the unit tests to check batching.
 *
 * All prompts advance together: each step builds one [batch, K] int64 tensor
 * of left-padded context windows and makes exactly one session.run call.
 * Because the model is row-independent and padding is on the left, a prompt's
 * continuation does not depend on which other prompts share its batch.
 */
import * as ort from 'onnxruntime-web'
import { CONTEXT_LENGTH, INPUT_NAME, OUTPUT_NAME, contextWindow } from '../../../examples/text-generator/context.js'
import { argmax } from '../../../examples/text-generator/greedy.js'
import { decode, encode } from '../../../examples/text-generator/vocab.js'
import { outputTensor } from '../lib/ort-session.js'

export interface GenerateResult {
  /** Generated continuations, without the prompts. */
  texts: string[]
  /** session.run calls made; equals maxNewChars whatever the batch size. */
  runs: number
}

export async function generateGreedy(session: ort.InferenceSession, prompts: readonly string[], maxNewChars: number): Promise<GenerateResult> {
  const K = CONTEXT_LENGTH
  const batch = prompts.length
  const seqs = prompts.map((p) => encode(p))
  const starts = seqs.map((s) => s.length)
  const input = new BigInt64Array(batch * K)
  let runs = 0
  for (let step = 0; step < maxNewChars; step++) {
    seqs.forEach((seq, b) => contextWindow(seq, input, b * K))
    const result = await session.run({ [INPUT_NAME]: new ort.Tensor('int64', input, [batch, K]) })
    runs++
    const logits = outputTensor(result, OUTPUT_NAME)
    const vocab = logits.dims[1] ?? 0
    const data = logits.data as Float32Array
    seqs.forEach((seq, b) => seq.push(argmax(data, b * vocab, vocab)))
  }
  return { texts: seqs.map((s, b) => decode(s.slice(starts[b]))), runs }
}
