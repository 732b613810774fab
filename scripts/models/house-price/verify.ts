/**
 * Check that onnxruntime-web reproduces the TypeScript forward pass.
 *
 *   npx tsx scripts/models/house-price/verify.ts [--model <path/to/house-price.onnx>]
 *
 * The weights are read back from the .onnx file itself, so this covers the
 * serializer as well as the graph. Exits non-zero on any mismatch > 1e-4.
 */
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { INPUT_NAME, NUM_FEATURES, OUTPUT_NAME } from '../../../examples/house-price/features.js'
import { readFloatParams } from '../lib/onnx-reader.js'
import { createSession, ort, outputTensor } from '../lib/ort-session.js'
import { generateDataset } from './dataset.js'
import { PARAM_NAMES, predict, type MlpParams } from './mlp.js'

const TOLERANCE = 1e-4

const { values } = parseArgs({
  options: {
    model: {
      type: 'string',
      default: fileURLToPath(new URL('../../../examples/house-price/model/house-price.onnx', import.meta.url)),
    },
  },
})

const bytes = new Uint8Array(readFileSync(values.model))
const params: MlpParams = readFloatParams(bytes, PARAM_NAMES)

const session = await createSession(bytes)
console.log('inputs', JSON.stringify(session.inputMetadata), '\noutputs', JSON.stringify(session.outputMetadata))

// Fresh rows from a different seed than training: any valid input must match.
const data = generateDataset(64, 7)
let failed = false
for (const batch of [1, 32]) {
  const x = data.x.slice(0, batch * NUM_FEATURES)
  const expected = predict(params, x, batch)
  const result = await session.run({ [INPUT_NAME]: new ort.Tensor('float32', x, [batch, NUM_FEATURES]) })
  const out = outputTensor(result, OUTPUT_NAME)
  if (out.dims.join(',') !== `${batch},1`) throw new Error(`unexpected output dims ${out.dims.join(',')}`)
  const got = out.data as Float32Array
  let maxDiff = 0
  for (let i = 0; i < batch; i++) maxDiff = Math.max(maxDiff, Math.abs(got[i]! - expected[i]!))
  const ok = maxDiff <= TOLERANCE
  failed ||= !ok
  console.log(
    `batch ${String(batch).padStart(2)}: max |onnx - ts| = ${maxDiff.toExponential(2)} ${ok ? 'OK' : 'FAIL'}  ` +
      `(first: onnx ${got[0]!.toFixed(5)} ts ${expected[0]!.toFixed(5)} target ${data.y[0]!.toFixed(3)})`,
  )
}
if (failed) process.exit(1)
