import { sampleIntervalMs } from '../../deployment/autoscaling-policy.js'
import type { Deployment } from '../../deployment/deployment.js'
import type { Router } from '../../deployment/router.js'
import type { ReplicaScaling, ScaleStatus } from '../../deployment/scaling.js'
import { ReplicaUnavailableError } from '../../errors.js'
import type { MetricsSnapshot } from '../../metrics/registry.js'
import type { CoordinatorStatus, ScaleReport } from './coordinator.js'

/** What an isolate calls on the coordinator object (see ReplicaObject). */
export interface CoordinatorStub {
  scaleReport(report: ScaleReport): Promise<number>
  scaleStatus(): Promise<CoordinatorStatus>
}

/**
 * This isolate's router id in its reports: one per isolate, like the routers
 * themselves. Made on first use: workerd forbids random values at global scope.
 */
let routerId: string | undefined
const thisRouter = () => (routerId ??= crypto.randomUUID())

/**
 * An autoscaled deployment as one Worker isolate sees it: the count comes
 * from the deployment's coordinator object, asked before routing when the
 * last answer is older than one sample interval. Asking also reports the
 * requests waiting in this isolate's router (the replicas report the rest),
 * so an idle isolate costs nothing.
 *
 * One request per isolate refreshes at a time; the others route on the
 * count they have, which is at most an interval old. A request that finds
 * no replica at all (scaled to zero, or not yet asked) asks itself, so the
 * coordinator starts one at once and no request waits on another's call.
 */
export class CoordinatedScaling implements ReplicaScaling {
  private readonly intervalMs: number
  private syncedAt = -Infinity
  private known = false
  private syncing = false

  constructor(
    private readonly deployment: Deployment,
    private readonly router: Router,
    private readonly coordinator: () => CoordinatorStub,
  ) {
    this.intervalMs = sampleIntervalMs(deployment.options.autoscaling!)
    // A request left waiting with no replica (another request's answer took the count to zero) asks for one itself.
    router.events = { drained: () => undefined, demand: () => void this.sync().catch(() => undefined) }
  }

  readonly beforeRoute = async (): Promise<void> => {
    const fresh = Date.now() - this.syncedAt < this.intervalMs
    const routable = this.known && this.router.replicas > 0
    if (routable && (fresh || this.syncing)) return
    this.syncing = true
    try {
      await this.sync()
    } catch (error) {
      // Route on the count this isolate has, if it has one; otherwise nothing can answer.
      if (!routable) {
        throw new ReplicaUnavailableError(`the autoscaler of ${this.deployment.name} could not be reached to start a replica; retry later`, {
          cause: error,
        })
      }
    } finally {
      this.syncing = false
    }
  }

  /** Ask the coordinator for the count (it starts a replica if there is none), reporting this router's waiting requests. */
  private async sync(): Promise<void> {
    const replicas = await this.coordinator().scaleReport({ router: thisRouter(), waiting: this.router.queued })
    this.syncedAt = Date.now()
    this.known = true
    this.router.setReplicas(replicas)
  }

  async running(): Promise<readonly number[]> {
    const { replicas } = await this.coordinator().scaleStatus()
    return Array.from({ length: replicas }, (_, i) => i)
  }

  async status(): Promise<ScaleStatus> {
    const { replicas } = await this.coordinator().scaleStatus()
    return { replicas, autoscaling: this.deployment.options.autoscaling! }
  }

  async metrics(): Promise<MetricsSnapshot> {
    return (await this.coordinator().scaleStatus()).metrics
  }
}
