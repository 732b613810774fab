/**
 * Turn trained MlpParams into an ONNX graph.
 *
 * Standardization is kept as explicit Sub/Mul ops (rather than folded into the
 * first Gemm) so the graph stays self-describing: anyone opening it in Netron
 * sees the feature means and scales, and raw, unscaled features go in.
 */
import { INPUT_NAME, OUTPUT_NAME } from '../../../examples/house-price/features.js'
import { graph } from '../lib/onnx-writer.js'
import { LAYER_SIZES, type MlpParams } from './mlp.js'

export function exportMlp(p: MlpParams): Uint8Array {
  const [d0, d1, d2, d3] = LAYER_SIZES
  const f32 = (name: string, dims: number[], data: Float32Array) => ({ name, dtype: 'float32' as const, dims, data })
  return graph({
    name: 'house_price_mlp',
    producerName: 'scripts/models/house-price/train.ts',
    docString: 'Synthetic California-housing-like regression MLP 8->32->16->1 (price in $100k).',
    opset: 13,
    inputs: [{ name: INPUT_NAME, dtype: 'float32', shape: ['batch', d0] }],
    outputs: [{ name: OUTPUT_NAME, dtype: 'float32', shape: ['batch', d3] }],
    initializers: [
      f32('mean', [d0], p.mean),
      f32('invStd', [d0], p.invStd),
      f32('W1', [d0, d1], p.W1),
      f32('b1', [d1], p.b1),
      f32('W2', [d1, d2], p.W2),
      f32('b2', [d2], p.b2),
      f32('W3', [d2, d3], p.W3),
      f32('b3', [d3], p.b3),
    ],
    nodes: [
      // Broadcasting [batch, 8] op [8] standardizes every row.
      { op: 'Sub', inputs: [INPUT_NAME, 'mean'], outputs: ['centered'] },
      { op: 'Mul', inputs: ['centered', 'invStd'], outputs: ['z0'] },
      { op: 'Gemm', inputs: ['z0', 'W1', 'b1'], outputs: ['a1'] },
      { op: 'Relu', inputs: ['a1'], outputs: ['h1'] },
      { op: 'Gemm', inputs: ['h1', 'W2', 'b2'], outputs: ['a2'] },
      { op: 'Relu', inputs: ['a2'], outputs: ['h2'] },
      { op: 'Gemm', inputs: ['h2', 'W3', 'b3'], outputs: [OUTPUT_NAME] },
    ],
  })
}
