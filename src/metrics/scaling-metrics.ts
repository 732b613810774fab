import { MetricsRegistry, type CounterSample, type MetricsSnapshot } from './registry.js'

/**
 * A deployment's own metrics, beside its replicas' ones: how many replicas
 * take requests, and, when it autoscales, how many the autoscaler started and
 * stopped. Kept by whoever holds the count: the ReplicaSet on Node, the
 * coordinator object on Workers.
 */
export class ScalingMetrics {
  private readonly registry = new MetricsRegistry()
  private readonly starts: CounterSample | undefined
  private readonly stops: CounterSample | undefined

  constructor(deployment: string, replicas: () => number, autoscaled: boolean) {
    const labels = { deployment }
    this.registry.gauge({ name: 'edgeserve_replicas', help: 'Replicas taking new requests.', read: () => [{ labels, value: replicas() }] })
    if (autoscaled) {
      this.starts = this.registry.counter('edgeserve_replica_starts_total', 'Replicas the autoscaler started.').labels(labels)
      this.stops = this.registry
        .counter('edgeserve_replica_stops_total', 'Replicas the autoscaler stopped, each once it had answered what it held.')
        .labels(labels)
    }
  }

  started(): void {
    if (this.starts) this.starts.value++
  }

  stopped(): void {
    if (this.stops) this.stops.value++
  }

  snapshot(): MetricsSnapshot {
    return this.registry.snapshot()
  }
}
