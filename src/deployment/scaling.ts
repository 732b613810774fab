import type { MetricsSnapshot } from '../metrics/registry.js'
import { ScalingMetrics } from '../metrics/scaling-metrics.js'
import type { Deployment } from './deployment.js'
import type { ResolvedAutoscalingConfig } from './options.js'
import type { Router } from './router.js'

/** What `/-/routes` shows of a deployment's count. */
export interface ScaleStatus {
  /** Replicas taking new requests now. */
  replicas: number
  /** The autoscaling config in force; absent for a fixed count. */
  autoscaling?: ResolvedAutoscalingConfig
}

/**
 * Who keeps a deployment's replica count, as the admin routes and the
 * ingress see it: a fixed count, an autoscaler in this process (Node), or a
 * coordinator object that every Worker isolate asks (Workers).
 */
export interface ReplicaScaling {
  /**
   * Called before each request is routed, when present: on Workers it brings
   * this isolate's count up to date when it is stale. Absent where the
   * router's count is always current.
   */
  readonly beforeRoute?: (() => Promise<void>) | undefined
  /** The replicas running now (taking requests or finishing what they hold): the ones admin routes ask. */
  running(): Promise<readonly number[]>
  status(): Promise<ScaleStatus>
  /** The deployment's own metrics: `edgeserve_replicas`, and starts and stops when it autoscales. */
  metrics(): Promise<MetricsSnapshot>
}

/** A fixed `numReplicas`: every replica runs for the app's life. */
export class FixedScaling implements ReplicaScaling {
  private readonly indexes: number[]
  private readonly meter: ScalingMetrics

  constructor(deployment: Deployment, router: Router) {
    this.indexes = Array.from({ length: deployment.options.numReplicas }, (_, i) => i)
    this.meter = new ScalingMetrics(deployment.name, () => router.replicas, false)
  }

  async running(): Promise<readonly number[]> {
    return this.indexes
  }

  async status(): Promise<ScaleStatus> {
    return { replicas: this.indexes.length }
  }

  async metrics(): Promise<MetricsSnapshot> {
    return this.meter.snapshot()
  }
}
