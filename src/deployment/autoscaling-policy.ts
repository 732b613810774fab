import type { ResolvedAutoscalingConfig } from './options.js'

/**
 * Ray Serve's autoscaling decision, runtime-agnostic: whoever keeps the
 * count (`LocalAutoscaler` on Node, the coordinator object on Workers)
 * records the deployment's total ongoing requests at a steady interval and
 * asks `decide()` for the count to run now.
 *
 * The count wanted is `ceil(average ongoing / targetOngoingRequests)` over
 * the last `lookBackPeriodS`, kept within min and max. A change is adopted
 * only once it has been wanted without a break for `upscaleDelayS` (up) or
 * `downscaleDelayS` (down), so a short burst or lull does not churn
 * replicas. One exception, as in Ray: from zero replicas, a waiting request
 * starts one at once, since nothing else could ever answer it.
 */
export class AutoscalingPolicy {
  /** Sample times (ms) and values, oldest first, pruned to the look-back window. */
  private readonly times: number[] = []
  private readonly values: number[] = []
  /** When the current wish to scale (up or down) began; undefined while the count is right. */
  private wantedSince: number | undefined
  private wantedUp = false

  constructor(readonly config: ResolvedAutoscalingConfig) {}

  /** Record the total ongoing requests (queued and running) at `now` (epoch ms). */
  record(now: number, ongoing: number): void {
    this.times.push(now)
    this.values.push(ongoing)
    const oldest = now - this.config.lookBackPeriodS * 1000
    let drop = 0
    while (drop < this.times.length - 1 && this.times[drop]! < oldest) drop++
    if (drop > 0) {
      this.times.splice(0, drop)
      this.values.splice(0, drop)
    }
  }

  /** Mean of the samples in the window (they are taken at a steady interval); 0 without any. */
  average(): number {
    if (this.values.length === 0) return 0
    let sum = 0
    for (const value of this.values) sum += value
    return sum / this.values.length
  }

  /** The count the load asks for, within min and max, regardless of delays. */
  desired(): number {
    const { minReplicas, maxReplicas, targetOngoingRequests } = this.config
    return Math.min(maxReplicas, Math.max(minReplicas, Math.ceil(this.average() / targetOngoingRequests - 1e-9)))
  }

  /** The count to run at `now`, given `current` replicas and the requests `waiting` for one now. */
  decide(now: number, current: number, waiting: number): number {
    const desired = this.desired()
    if (current === 0 && waiting > 0) {
      this.wantedSince = undefined
      return Math.max(1, desired)
    }
    if (desired === current) {
      this.wantedSince = undefined
      return current
    }
    const up = desired > current
    if (this.wantedSince === undefined || this.wantedUp !== up) {
      this.wantedSince = now
      this.wantedUp = up
    }
    const delayS = up ? this.config.upscaleDelayS : this.config.downscaleDelayS
    if (now - this.wantedSince < delayS * 1000) return current
    this.wantedSince = undefined
    return desired
  }
}

/**
 * How often to sample the load: ten samples per look-back window, and at
 * least two per delay so a short delay is honoured closely; between 10 ms
 * and 1 s.
 */
export function sampleIntervalMs(config: ResolvedAutoscalingConfig): number {
  const spans = [config.lookBackPeriodS / 10]
  if (config.upscaleDelayS > 0) spans.push(config.upscaleDelayS / 2)
  if (config.downscaleDelayS > 0) spans.push(config.downscaleDelayS / 2)
  return Math.min(1000, Math.max(10, Math.min(...spans) * 1000))
}
