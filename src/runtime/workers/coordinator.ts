import { AutoscalingPolicy, sampleIntervalMs } from '../../deployment/autoscaling-policy.js'
import type { Deployment } from '../../deployment/deployment.js'
import type { ResolvedAutoscalingConfig } from '../../deployment/options.js'
import { log } from '../../metrics/log.js'
import type { MetricsSnapshot } from '../../metrics/registry.js'
import { ScalingMetrics } from '../../metrics/scaling-metrics.js'

/** A Worker isolate's router, asking for the count because it has a request to route. */
export interface ScaleReport {
  /** The isolate's own id, made once per isolate. */
  router: string
  /** Requests waiting in this router for a replica (all replicas at maxOngoingRequests). */
  waiting: number
}

export interface CoordinatorStatus {
  /** Replicas taking new requests. */
  replicas: number
  metrics: MetricsSnapshot
}

/** The part of a Durable Object's storage the coordinator uses: its count survives the object's eviction. */
export interface CoordinatorStorage {
  get<T>(key: string): Promise<T | undefined>
  put<T>(key: string, value: T): Promise<void>
  setAlarm(scheduledTime: number): Promise<void>
}

/** What the coordinator asks of a replica's object. */
export interface ReplicaControl {
  /** Bring it into service; true if it had to start (false: it was still finishing its requests, and stays). */
  start(): Promise<boolean>
  /** Take it out of service: it answers what it holds, then disposes of its instance and tells the coordinator. */
  retire(): Promise<void>
}

const COUNT_KEY = 'edgeserve.replicas'

/** The name of a deployment's coordinator object, beside its replicas' `"<name>/<i>"`. */
export function coordinatorName(deployment: Deployment): string {
  return `${deployment.name}/autoscaler`
}

/**
 * The one place a Workers deployment's replica count is kept: a Durable
 * Object of the deployment's own class, named `"<deployment>/autoscaler"`.
 *
 * The load comes from where it is exact: each replica's object reports its
 * ongoing requests (queued and running) when they change, at most once per
 * sample interval, and its last report holds until the next, so a replica
 * holding a long request with no traffic still counts. Worker isolates add
 * the requests waiting in their routers when they ask for the count (at most
 * once per interval, see `CoordinatedScaling`); those reports lapse after
 * three intervals, as an isolate may be gone. At each alarm the coordinator
 * sums both, feeds the same policy as on Node, and starts or retires
 * replicas over RPC. Alarms run while there is load or replicas above the
 * minimum, so an idle deployment costs nothing.
 */
export class ScaleCoordinator {
  private readonly config: ResolvedAutoscalingConfig
  private readonly policy: AutoscalingPolicy
  private readonly meter: ScalingMetrics
  private readonly intervalMs: number
  /** Requests waiting in each isolate's router, as last reported. */
  private readonly waiting = new Map<string, { count: number; at: number }>()
  /** Ongoing requests of each replica, as last reported by its object. */
  private readonly loads = new Map<number, number>()
  private replicas: number | undefined
  private alarmArmed = false

  constructor(
    private readonly deployment: Deployment,
    private readonly storage: CoordinatorStorage,
    private readonly replica: (index: number) => ReplicaControl,
  ) {
    this.config = deployment.options.autoscaling!
    this.policy = new AutoscalingPolicy(this.config)
    this.intervalMs = sampleIntervalMs(this.config)
    this.meter = new ScalingMetrics(deployment.name, () => this.replicas ?? this.config.initialReplicas, true)
  }

  /** A router's report; answers the count it should route over. */
  async report(report: ScaleReport): Promise<number> {
    const current = await this.count()
    if (report.waiting > 0) this.waiting.set(report.router, { count: report.waiting, at: Date.now() })
    else this.waiting.delete(report.router)
    // Every report comes with a request to route: from zero, a replica starts at once.
    if (current === 0) await this.decide(Math.max(1, report.waiting))
    await this.arm()
    return this.replicas!
  }

  async status(): Promise<CoordinatorStatus> {
    return { replicas: await this.count(), metrics: this.meter.snapshot() }
  }

  /** A replica's object reports its ongoing requests. */
  async load(replica: number, ongoing: number): Promise<void> {
    if (ongoing > 0) this.loads.set(replica, ongoing)
    else this.loads.delete(replica)
    await this.arm()
  }

  /** A retired replica answered its last request and disposed of its instance. */
  stopped(replica: number): void {
    this.loads.delete(replica)
    this.meter.stopped()
  }

  /** The alarm: sample the load, decide, and keep sampling while anything may still change. */
  async tick(): Promise<void> {
    this.alarmArmed = false
    await this.count()
    const now = Date.now()
    let total = 0
    for (const ongoing of this.loads.values()) total += ongoing
    for (const [router, { count, at }] of this.waiting) {
      if (now - at > 3 * this.intervalMs) this.waiting.delete(router)
      else total += count
    }
    this.policy.record(now, total)
    await this.decide(0)
    if (total > 0 || this.policy.average() > 0 || this.replicas! > this.config.minReplicas) await this.arm()
  }

  private async count(): Promise<number> {
    if (this.replicas === undefined) {
      const stored = await this.storage.get<number>(COUNT_KEY)
      if (this.replicas === undefined) {
        this.replicas = stored ?? this.config.initialReplicas
        // The replicas of a first start count as started, as on Node.
        if (stored === undefined) for (let i = 0; i < this.replicas; i++) this.meter.started()
      }
    }
    return this.replicas
  }

  private async decide(waiting: number): Promise<void> {
    const current = this.replicas!
    const next = this.policy.decide(Date.now(), current, waiting)
    if (next === current) return
    this.replicas = next
    await this.storage.put(COUNT_KEY, next)
    const changed = next > current ? range(current, next) : range(next, current)
    await Promise.all(
      changed.map(async (index) => {
        try {
          if (next > current) {
            if (await this.replica(index).start()) this.meter.started()
          } else await this.replica(index).retire()
        } catch (error) {
          log.warn(next > current ? 'replica_start_failed' : 'replica_retire_failed', {
            deployment: this.deployment.name,
            replica: index,
            message: error instanceof Error ? error.message : String(error),
          })
        }
      }),
    )
  }

  private async arm(): Promise<void> {
    if (this.alarmArmed) return
    this.alarmArmed = true
    await this.storage.setAlarm(Date.now() + this.intervalMs)
  }
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from }, (_, i) => from + i)
}
