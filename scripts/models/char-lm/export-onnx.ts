/**
 * Build the ONNX graph for the character MLP.
 *
 *   context int64 [batch, K]
 *     -> Gather(emb, axis 0)  [batch, K, E]
 *     -> Flatten(axis 1)      [batch, K*E]   (k-major, same order as model.ts)
 *     -> Gemm(W1, b1) -> Tanh -> Gemm(W2, b2)
 *   logits float32 [batch, V]
 *
 * Every op is row-independent, which is what makes batched decoding of
 * different-length (left-padded) prompts give the same result as one-by-one.
 */
import { INPUT_NAME, OUTPUT_NAME } from '../../../examples/text-generator/context.js'
import { graph } from '../lib/onnx-writer.js'
import type { CharMlpConfig, CharMlpParams } from './model.js'

export function exportCharMlp(cfg: CharMlpConfig, p: CharMlpParams): Uint8Array {
  const { vocab: V, context: K, embed: E, hidden: H } = cfg
  return graph({
    name: 'char_mlp_lm',
    producerName: 'scripts/models/char-lm/train.ts',
    docString: `Character-level MLP language model: K=${K} context, E=${E} embedding, H=${H} hidden, V=${V} vocab.`,
    opset: 13,
    inputs: [{ name: INPUT_NAME, dtype: 'int64', shape: ['batch', K] }],
    outputs: [{ name: OUTPUT_NAME, dtype: 'float32', shape: ['batch', V] }],
    initializers: [
      { name: 'emb', dtype: 'float32', dims: [V, E], data: p.emb },
      { name: 'W1', dtype: 'float32', dims: [K * E, H], data: p.W1 },
      { name: 'b1', dtype: 'float32', dims: [H], data: p.b1 },
      { name: 'W2', dtype: 'float32', dims: [H, V], data: p.W2 },
      { name: 'b2', dtype: 'float32', dims: [V], data: p.b2 },
    ],
    nodes: [
      { op: 'Gather', inputs: ['emb', INPUT_NAME], outputs: ['embedded'] },
      { op: 'Flatten', inputs: ['embedded'], outputs: ['flat'] },
      { op: 'Gemm', inputs: ['flat', 'W1', 'b1'], outputs: ['pre_hidden'] },
      { op: 'Tanh', inputs: ['pre_hidden'], outputs: ['hidden'] },
      { op: 'Gemm', inputs: ['hidden', 'W2', 'b2'], outputs: [OUTPUT_NAME] },
    ],
  })
}
