/**
 * Train the house-price MLP on the synthetic dataset and export it as ONNX.
 *
 *   npx tsx scripts/models/house-price/train.ts [--out <dir>] [--seed 42] [--name house-price] [--price-level 1]
 *
 * Writes <out>/<name>.onnx and <out>/<name>.meta.json (feature names, seeds
 * and RMSE numbers); <out> defaults to examples/house-price/model/.
 * `--price-level` scales the dataset's prices (the regional example's
 * markets). Everything is seeded, so rerunning produces byte-identical files.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { FEATURE_NAMES, INPUT_NAME, NUM_FEATURES, OUTPUT_NAME } from '../../../examples/house-price/features.js'
import { Adam } from '../lib/adam.js'
import { Prng } from '../lib/prng.js'
import { generateDataset } from './dataset.js'
import { exportMlp } from './export-onnx.js'
import { TRAINABLE, backwardRow, forwardRow, initParams, makeActivations, predict, type TrainableName } from './mlp.js'

export const DATASET_SIZE = 5000
export const TEST_FRACTION = 0.2
const EPOCHS = 120
const BATCH = 64
const LR = 3e-3

const { values } = parseArgs({
  options: {
    out: { type: 'string', default: fileURLToPath(new URL('../../../examples/house-price/model/', import.meta.url)) },
    seed: { type: 'string', default: '42' },
    name: { type: 'string', default: 'house-price' },
    'price-level': { type: 'string', default: '1' },
  },
})
const seed = Number(values.seed)
const outDir = values.out
const name = values.name
const priceLevel = Number(values['price-level'])
if (!(priceLevel > 0)) throw new RangeError(`--price-level must be a number above 0, received ${values['price-level']}`)

const rmse = (pred: ArrayLike<number>, y: ArrayLike<number>): number => {
  let s = 0
  for (let i = 0; i < y.length; i++) s += (pred[i]! - y[i]!) ** 2
  return Math.sqrt(s / y.length)
}

// --- data ------------------------------------------------------------------
const data = generateDataset(DATASET_SIZE, seed, priceLevel)
const nTest = Math.round(DATASET_SIZE * TEST_FRACTION)
const nTrain = DATASET_SIZE - nTest
// The generator already draws rows i.i.d., so a contiguous split is unbiased.
const xTrain = data.x.subarray(0, nTrain * NUM_FEATURES)
const yTrain = data.y.subarray(0, nTrain)
const xTest = data.x.subarray(nTrain * NUM_FEATURES)
const yTest = data.y.subarray(nTrain)

// Standardization statistics come from the training split only.
const mean = new Float32Array(NUM_FEATURES)
const invStd = new Float32Array(NUM_FEATURES)
for (let j = 0; j < NUM_FEATURES; j++) {
  let s = 0
  let s2 = 0
  for (let i = 0; i < nTrain; i++) {
    const v = xTrain[i * NUM_FEATURES + j]!
    s += v
    s2 += v * v
  }
  const m = s / nTrain
  mean[j] = m
  invStd[j] = 1 / Math.sqrt(Math.max(s2 / nTrain - m * m, 1e-12))
}
const yMean = yTrain.reduce((a, b) => a + b, 0) / nTrain

// --- training --------------------------------------------------------------
const rng = new Prng(seed + 1)
const params = initParams(mean, invStd, yMean, rng)
const grads = Object.fromEntries(TRAINABLE.map((k) => [k, new Float32Array(params[k].length)])) as Record<TrainableName, Float32Array>
const opt = new Adam(
  TRAINABLE.map((k) => params[k]),
  TRAINABLE.map((k) => grads[k]),
  { lr: LR },
)

const order = Uint32Array.from({ length: nTrain }, (_, i) => i)
const act = makeActivations()
const t0 = performance.now()
for (let epoch = 0; epoch < EPOCHS; epoch++) {
  // Cosine decay to 5% of the base rate: a cheap way to settle into a minimum.
  opt.lr = LR * (0.05 + 0.95 * 0.5 * (1 + Math.cos((Math.PI * epoch) / EPOCHS)))
  rng.shuffle(order)
  for (let start = 0; start < nTrain; start += BATCH) {
    const end = Math.min(nTrain, start + BATCH)
    const scale = 1 / (end - start)
    for (let k = start; k < end; k++) {
      const r = order[k]!
      forwardRow(params, xTrain.subarray(r * NUM_FEATURES, (r + 1) * NUM_FEATURES), act)
      backwardRow(params, act, yTrain[r]!, scale, grads)
    }
    opt.step()
  }
  if (epoch % 20 === 0 || epoch === EPOCHS - 1) {
    const tr = rmse(predict(params, xTrain, nTrain), yTrain)
    console.log(`epoch ${String(epoch).padStart(3)}  train RMSE ${tr.toFixed(4)}`)
  }
}
const trainSeconds = (performance.now() - t0) / 1000

// --- evaluation ------------------------------------------------------------
const metrics = {
  trainRmse: rmse(predict(params, xTrain, nTrain), yTrain),
  testRmse: rmse(predict(params, xTest, nTest), yTest),
  // Baseline: always predict the training-set mean price.
  baselineTrainRmse: rmse(new Float32Array(nTrain).fill(yMean), yTrain),
  baselineTestRmse: rmse(new Float32Array(nTest).fill(yMean), yTest),
  // Irreducible error: the formula adds N(0, 0.2) noise (before clipping).
  noiseStd: 0.2,
}
console.log(
  `MLP   train RMSE ${metrics.trainRmse.toFixed(4)}  test RMSE ${metrics.testRmse.toFixed(4)}\n` +
    `mean  train RMSE ${metrics.baselineTrainRmse.toFixed(4)}  test RMSE ${metrics.baselineTestRmse.toFixed(4)}\n` +
    `trained in ${trainSeconds.toFixed(1)} s`,
)

// --- export ----------------------------------------------------------------
mkdirSync(outDir, { recursive: true })
const onnxBytes = exportMlp(params)
writeFileSync(join(outDir, `${name}.onnx`), onnxBytes)
const meta = {
  input: { name: INPUT_NAME, dtype: 'float32', shape: ['batch', NUM_FEATURES] },
  output: { name: OUTPUT_NAME, dtype: 'float32', shape: ['batch', 1], unit: '$100k' },
  features: FEATURE_NAMES,
  dataset: {
    generator: 'scripts/models/house-price/dataset.ts',
    size: DATASET_SIZE,
    testFraction: TEST_FRACTION,
    seed,
    ...(priceLevel === 1 ? {} : { priceLevel }),
  },
  training: { epochs: EPOCHS, batch: BATCH, lr: LR, optimizer: 'adam' },
  metrics: Object.fromEntries(Object.entries(metrics).map(([k, v]) => [k, Number(v.toFixed(5))])),
}
writeFileSync(join(outDir, `${name}.meta.json`), JSON.stringify(meta, null, 2) + '\n')
console.log(`wrote ${join(outDir, `${name}.onnx`)} (${onnxBytes.length} bytes)`)
