/**
 * Adam optimizer over a flat list of Float32Array parameter tensors.
 *
 * Parameters and their gradients are kept as parallel Float32Arrays so the
 * hand-written backprop code can accumulate into `grads[i]` directly and the
 * optimizer never allocates during training.
 */
export interface AdamOptions {
  lr: number
  beta1?: number
  beta2?: number
  eps?: number
  /** Decoupled weight decay (AdamW); 0 disables it. */
  weightDecay?: number
}

export class Adam {
  private readonly m: Float32Array[]
  private readonly v: Float32Array[]
  private t = 0
  lr: number
  private readonly beta1: number
  private readonly beta2: number
  private readonly eps: number
  private readonly weightDecay: number

  constructor(
    private readonly params: Float32Array[],
    private readonly grads: Float32Array[],
    opts: AdamOptions,
  ) {
    if (params.length !== grads.length) throw new Error('params/grads length mismatch')
    this.m = params.map((p) => new Float32Array(p.length))
    this.v = params.map((p) => new Float32Array(p.length))
    this.lr = opts.lr
    this.beta1 = opts.beta1 ?? 0.9
    this.beta2 = opts.beta2 ?? 0.999
    this.eps = opts.eps ?? 1e-8
    this.weightDecay = opts.weightDecay ?? 0
  }

  /** Apply one update using the current gradients, then zero them. */
  step(): void {
    this.t++
    const { beta1, beta2, eps, lr, weightDecay } = this
    // Bias correction folded into the step size (standard Adam formulation).
    const c1 = 1 - Math.pow(beta1, this.t)
    const c2 = 1 - Math.pow(beta2, this.t)
    const stepSize = (lr * Math.sqrt(c2)) / c1
    for (let k = 0; k < this.params.length; k++) {
      const p = this.params[k]!
      const g = this.grads[k]!
      const m = this.m[k]!
      const v = this.v[k]!
      for (let i = 0; i < p.length; i++) {
        const gi = g[i]!
        const mi = (m[i] = beta1 * m[i]! + (1 - beta1) * gi)
        const vi = (v[i] = beta2 * v[i]! + (1 - beta2) * gi * gi)
        p[i]! -= stepSize * (mi / (Math.sqrt(vi) + eps)) + lr * weightDecay * p[i]!
        g[i] = 0
      }
    }
  }
}
