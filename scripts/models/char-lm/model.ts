/**
 * Fixed-window character MLP (Bengio et al. 2003 style):
 *
 *   context ids [K] -> embedding [K, E] -> flatten [K*E]
 *     -> Dense(H) -> tanh -> Dense(V) -> logits
 *
 * Every op maps 1:1 onto ONNX (Gather, Flatten, Gemm, Tanh, Gemm), and each
 * batch row is computed independently, so batched inference is exactly
 * per-row inference. Weights are [in, out] row-major = Gemm's B with transB=0.
 */
import { Prng } from '../lib/prng.js'

export interface CharMlpConfig {
  vocab: number // V
  context: number // K
  embed: number // E
  hidden: number // H
}

export interface CharMlpParams {
  emb: Float32Array // [V, E]
  W1: Float32Array // [K*E, H]
  b1: Float32Array // [H]
  W2: Float32Array // [H, V]
  b2: Float32Array // [V]
}

/** Every parameter, in ONNX initializer order. */
export const PARAM_NAMES = ['emb', 'W1', 'b1', 'W2', 'b2'] as const satisfies readonly (keyof CharMlpParams)[]
export type ParamName = (typeof PARAM_NAMES)[number]

export function initParams(cfg: CharMlpConfig, rng: Prng): CharMlpParams {
  const { vocab: V, context: K, embed: E, hidden: H } = cfg
  const normal = (n: number, std: number): Float32Array => {
    const a = new Float32Array(n)
    for (let i = 0; i < n; i++) a[i] = rng.normal(0, std)
    return a
  }
  return {
    emb: normal(V * E, 1),
    // ~Xavier for tanh: keeps pre-activations O(1) so tanh is not saturated.
    W1: normal(K * E * H, 1 / Math.sqrt(K * E)),
    b1: new Float32Array(H),
    // Small output weights: start near uniform predictions (loss ~ ln V).
    W2: normal(H * V, 0.01),
    b2: new Float32Array(V),
  }
}

/** Scratch buffers for one row; reused to avoid allocation in the hot loop. */
export interface RowState {
  x: Float32Array // [K*E] gathered embeddings
  h: Float32Array // [H] tanh activations
  logits: Float32Array // [V]
  dLogits: Float32Array // [V]
  dh: Float32Array // [H]
  dx: Float32Array // [K*E]
}

export function makeRowState(cfg: CharMlpConfig): RowState {
  const KE = cfg.context * cfg.embed
  return {
    x: new Float32Array(KE),
    h: new Float32Array(cfg.hidden),
    logits: new Float32Array(cfg.vocab),
    dLogits: new Float32Array(cfg.vocab),
    dh: new Float32Array(cfg.hidden),
    dx: new Float32Array(KE),
  }
}

/** Forward one context row; fills s.x, s.h, s.logits. */
export function forwardRow(cfg: CharMlpConfig, p: CharMlpParams, ctx: ArrayLike<number>, s: RowState): void {
  const { vocab: V, context: K, embed: E, hidden: H } = cfg
  for (let k = 0; k < K; k++) {
    const src = ctx[k]! * E
    s.x.set(p.emb.subarray(src, src + E), k * E)
  }
  // Hoist typed arrays into locals: V8 then keeps them in registers in the
  // hot loops instead of re-reading object properties every iteration.
  const { x, h, logits } = s
  const { W1, W2 } = p
  h.set(p.b1)
  for (let i = 0; i < K * E; i++) {
    const xi = x[i]!
    const row = i * H
    for (let j = 0; j < H; j++) h[j]! += xi * W1[row + j]!
  }
  for (let j = 0; j < H; j++) h[j] = Math.tanh(h[j]!)
  logits.set(p.b2)
  for (let j = 0; j < H; j++) {
    const hj = h[j]!
    const row = j * V
    for (let v = 0; v < V; v++) logits[v]! += hj * W2[row + v]!
  }
}

/**
 * Softmax cross-entropy for the row in `s` (after forwardRow), accumulating
 * gradients scaled by `scale` into `g`. Returns the loss in nats.
 */
export function backwardRow(
  cfg: CharMlpConfig,
  p: CharMlpParams,
  ctx: ArrayLike<number>,
  target: number,
  scale: number,
  s: RowState,
  g: CharMlpParams,
): number {
  const { vocab: V, context: K, embed: E, hidden: H } = cfg
  const { x, h, logits, dLogits, dh, dx } = s
  const { W1, W2 } = p
  const gW1 = g.W1
  const gW2 = g.W2
  // Numerically stable softmax; d(loss)/d(logit) = softmax - onehot.
  let max = -Infinity
  for (let v = 0; v < V; v++) if (logits[v]! > max) max = logits[v]!
  let sum = 0
  for (let v = 0; v < V; v++) {
    const e = Math.exp(logits[v]! - max)
    dLogits[v] = e
    sum += e
  }
  const loss = -(logits[target]! - max - Math.log(sum))
  for (let v = 0; v < V; v++) dLogits[v] = (dLogits[v]! / sum) * scale
  dLogits[target]! -= scale

  for (let v = 0; v < V; v++) g.b2[v]! += dLogits[v]!
  for (let j = 0; j < H; j++) {
    const hj = h[j]!
    const row = j * V
    let acc = 0
    for (let v = 0; v < V; v++) {
      const d = dLogits[v]!
      gW2[row + v]! += hj * d
      acc += W2[row + v]! * d
    }
    dh[j] = acc * (1 - hj * hj) // tanh'
  }
  for (let j = 0; j < H; j++) g.b1[j]! += dh[j]!
  for (let i = 0; i < K * E; i++) {
    const xi = x[i]!
    const row = i * H
    let acc = 0
    for (let j = 0; j < H; j++) {
      const d = dh[j]!
      gW1[row + j]! += xi * d
      acc += W1[row + j]! * d
    }
    dx[i] = acc
  }
  // Scatter input gradients back into the embedding rows that were gathered.
  for (let k = 0; k < K; k++) {
    const dst = ctx[k]! * E
    for (let e = 0; e < E; e++) g.emb[dst + e]! += dx[k * E + e]!
  }
  return loss
}

/** Cross-entropy (nats) of predicting `target` from a row of logits. */
export function rowLoss(logits: Float32Array, target: number): number {
  let max = -Infinity
  for (const l of logits) if (l > max) max = l
  let sum = 0
  for (const l of logits) sum += Math.exp(l - max)
  return -(logits[target]! - max - Math.log(sum))
}
