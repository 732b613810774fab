import { log } from '../metrics/log.js'
import type { MetricsSnapshot } from '../metrics/registry.js'
import { ScalingMetrics } from '../metrics/scaling-metrics.js'
import { AutoscalingPolicy, sampleIntervalMs } from './autoscaling-policy.js'
import type { Deployment } from './deployment.js'
import type { ReplicaEndpoint } from './endpoint.js'
import type { ResolvedAutoscalingConfig } from './options.js'
import type { Router } from './router.js'
import type { ReplicaScaling, ScaleStatus } from './scaling.js'

/**
 * Autoscaling where one router sees every request: on Node, where HTTP
 * requests and handle calls of a deployment all pass through the router of
 * its ReplicaSet. A timer samples the router's ongoing count (held by
 * replicas plus waiting), the policy decides, and the router's count moves.
 *
 * Scaling up starts the replica's endpoint (a worker thread spawns; an
 * in-process replica makes its instance on its first request). Scaling down
 * takes the highest replicas out of routing; each is stopped once it has
 * answered what it held (the router says when), which calls its instance's
 * `dispose()`, if any.
 */
export class LocalAutoscaler implements ReplicaScaling {
  private readonly config: ResolvedAutoscalingConfig
  private readonly policy: AutoscalingPolicy
  private readonly meter: ScalingMetrics
  /** Replicas started and not yet stopped: taking requests, or finishing what they hold. */
  private readonly live = new Set<number>()
  private readonly timer: ReturnType<typeof setInterval>

  constructor(
    private readonly deployment: Deployment,
    private readonly router: Router,
    private readonly endpoints: readonly ReplicaEndpoint[],
  ) {
    this.config = deployment.options.autoscaling!
    this.policy = new AutoscalingPolicy(this.config)
    this.meter = new ScalingMetrics(deployment.name, () => router.replicas, true)
    for (let replica = 0; replica < router.replicas; replica++) {
      this.live.add(replica)
      this.meter.started()
    }
    router.events = { drained: (replica) => this.drained(replica), demand: () => this.decide() }
    this.timer = setInterval(() => this.sample(), sampleIntervalMs(this.config))
    // The sampler alone must not keep a process alive.
    ;(this.timer as { unref?: () => void }).unref?.()
  }

  async running(): Promise<readonly number[]> {
    return [...this.live].sort((a, b) => a - b)
  }

  async status(): Promise<ScaleStatus> {
    return { replicas: this.router.replicas, autoscaling: this.config }
  }

  async metrics(): Promise<MetricsSnapshot> {
    return this.meter.snapshot()
  }

  /** Stop sampling (the server is closing). */
  close(): void {
    clearInterval(this.timer)
  }

  private sample(): void {
    this.policy.record(Date.now(), this.router.ongoing())
    this.decide()
  }

  private decide(): void {
    const { router } = this
    const next = this.policy.decide(Date.now(), router.replicas, router.queued)
    if (next === router.replicas) return
    for (let replica = router.replicas; replica < next; replica++) {
      if (this.live.has(replica)) continue // still finishing what it held: it simply takes requests again
      this.live.add(replica)
      this.meter.started()
      this.endpoints[replica]!.start?.().catch((error: unknown) => this.warn('replica_start_failed', replica, error))
    }
    router.setReplicas(next)
  }

  private drained(replica: number): void {
    if (replica < this.router.replicas || !this.live.has(replica)) return
    this.live.delete(replica)
    this.meter.stopped()
    this.endpoints[replica]!.stop?.().catch((error: unknown) => this.warn('replica_stop_failed', replica, error))
  }

  private warn(event: string, replica: number, error: unknown): void {
    log.warn(event, { deployment: this.deployment.name, replica, message: error instanceof Error ? error.message : String(error) })
  }
}
