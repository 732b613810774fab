/**
 * The house-price MLP: standardize -> Dense -> ReLU -> Dense -> ReLU -> Dense.
 *
 * Weights are stored [in, out] row-major, which is exactly ONNX Gemm's B
 * layout with transB = 0, so export is a straight copy. The same parameter
 * names are used as ONNX initializer names so the verify script and tests can read them back
 * out of the .onnx file and rerun this forward pass.
 */
import { Prng } from '../lib/prng.js'

export const LAYER_SIZES = [8, 32, 16, 1] as const

export interface MlpParams {
  mean: Float32Array // [8]  input mean, subtracted first
  invStd: Float32Array // [8] 1/std, multiplied second
  W1: Float32Array // [8, 32]
  b1: Float32Array // [32]
  W2: Float32Array // [32, 16]
  b2: Float32Array // [16]
  W3: Float32Array // [16, 1]
  b3: Float32Array // [1]
}

/** Every parameter, in ONNX initializer order. */
export const PARAM_NAMES = ['mean', 'invStd', 'W1', 'b1', 'W2', 'b2', 'W3', 'b3'] as const satisfies readonly (keyof MlpParams)[]
export const TRAINABLE = ['W1', 'b1', 'W2', 'b2', 'W3', 'b3'] as const
export type TrainableName = (typeof TRAINABLE)[number]

/** He-normal init for ReLU layers; seeded so training is reproducible. */
export function initParams(mean: Float32Array, invStd: Float32Array, yMean: number, rng: Prng): MlpParams {
  const dense = (fanIn: number, fanOut: number): Float32Array => {
    const w = new Float32Array(fanIn * fanOut)
    const std = Math.sqrt(2 / fanIn)
    for (let i = 0; i < w.length; i++) w[i] = rng.normal(0, std)
    return w
  }
  const [d0, d1, d2, d3] = LAYER_SIZES
  return {
    mean,
    invStd,
    W1: dense(d0, d1),
    b1: new Float32Array(d1),
    W2: dense(d1, d2),
    b2: new Float32Array(d2),
    W3: dense(d2, d3),
    // Start at the target mean so early training is not spent learning an offset.
    b3: Float32Array.of(yMean),
  }
}

/** out[j] = act(sum_i x[i] * W[i, j] + b[j]) for one row. */
function dense(x: Float32Array, W: Float32Array, b: Float32Array, out: Float32Array, relu: boolean): void {
  const nIn = x.length
  const nOut = out.length
  out.set(b)
  for (let i = 0; i < nIn; i++) {
    const xi = x[i]!
    if (xi === 0) continue
    const row = i * nOut
    for (let j = 0; j < nOut; j++) out[j]! += xi * W[row + j]!
  }
  if (relu) for (let j = 0; j < nOut; j++) if (out[j]! < 0) out[j] = 0
}

/** Per-row activations, kept for backprop. */
export interface Activations {
  z0: Float32Array
  h1: Float32Array
  h2: Float32Array
  out: Float32Array
}

export function makeActivations(): Activations {
  const [d0, d1, d2, d3] = LAYER_SIZES
  return { z0: new Float32Array(d0), h1: new Float32Array(d1), h2: new Float32Array(d2), out: new Float32Array(d3) }
}

export function forwardRow(p: MlpParams, x: ArrayLike<number>, a: Activations): number {
  for (let i = 0; i < a.z0.length; i++) a.z0[i] = (x[i]! - p.mean[i]!) * p.invStd[i]!
  dense(a.z0, p.W1, p.b1, a.h1, true)
  dense(a.h1, p.W2, p.b2, a.h2, true)
  dense(a.h2, p.W3, p.b3, a.out, false)
  return a.out[0]!
}

/** Forward pass over a row-major [n, 8] batch. */
export function predict(p: MlpParams, x: Float32Array, n: number): Float32Array {
  const a = makeActivations()
  const y = new Float32Array(n)
  const d0 = LAYER_SIZES[0]
  for (let r = 0; r < n; r++) y[r] = forwardRow(p, x.subarray(r * d0, (r + 1) * d0), a)
  return y
}

/**
 * Accumulate gradients of 0.5*(pred - target)^2 * scale for one row
 * (scale = 1/batchSize gives the mean-squared-error gradient).
 */
export function backwardRow(p: MlpParams, a: Activations, target: number, scale: number, g: Record<TrainableName, Float32Array>): void {
  const [, d1, d2] = LAYER_SIZES
  const dOut = (a.out[0]! - target) * scale
  // Layer 3 (linear, 1 output).
  g.b3[0]! += dOut
  const dh2 = new Float32Array(d2)
  for (let i = 0; i < d2; i++) {
    const h = a.h2[i]!
    g.W3[i]! += h * dOut
    // ReLU derivative: pass gradient only where the unit was active.
    dh2[i] = h > 0 ? p.W3[i]! * dOut : 0
  }
  // Layer 2.
  const dh1 = new Float32Array(d1)
  for (let j = 0; j < d2; j++) g.b2[j]! += dh2[j]!
  for (let i = 0; i < d1; i++) {
    const h = a.h1[i]!
    if (h === 0) continue // inactive ReLU: no gradient in or out
    let s = 0
    const row = i * d2
    for (let j = 0; j < d2; j++) {
      g.W2[row + j]! += h * dh2[j]!
      s += p.W2[row + j]! * dh2[j]!
    }
    dh1[i] = s
  }
  // Layer 1 (inputs are the standardized features, not trained).
  for (let j = 0; j < d1; j++) g.b1[j]! += dh1[j]!
  for (let i = 0; i < a.z0.length; i++) {
    const z = a.z0[i]!
    const row = i * d1
    for (let j = 0; j < d1; j++) g.W1[row + j]! += z * dh1[j]!
  }
}
