/**
 * A small metrics registry: counters and histograms with labels, gauges read
 * at collection time, and a serializable snapshot.
 *
 * Snapshots, not live objects, are what crosses boundaries: on Workers each
 * Durable Object returns its snapshot over RPC and the ingress merges them
 * into one Prometheus page. (prom-client would do on Node, but it leans on
 * Node's process APIs; this runs in workerd and browsers as well.)
 */

export type Labels = Record<string, string>

export interface CounterSample {
  labels: Labels
  value: number
}

export interface HistogramSample {
  labels: Labels
  /** Cumulative counts for each upper bound in the family's `buckets`. */
  counts: number[]
  sum: number
  count: number
}

export type MetricFamily =
  | { name: string; help: string; type: 'counter' | 'gauge'; samples: CounterSample[] }
  | { name: string; help: string; type: 'histogram'; buckets: number[]; samples: HistogramSample[] }

export type MetricsSnapshot = MetricFamily[]

function keyOf(labels: Labels): string {
  let key = ''
  for (const name in labels) key += `${name}=${labels[name]}\u0000`
  return key
}

export class Counter {
  private readonly values = new Map<string, CounterSample>()
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  inc(labels: Labels, by = 1): void {
    this.labels(labels).value += by
  }

  /**
   * The sample for these labels, to keep and increment directly
   * (`sample.value++`): the request path resolves its labels once, not per call.
   */
  labels(labels: Labels): CounterSample {
    const key = keyOf(labels)
    let sample = this.values.get(key)
    if (!sample) this.values.set(key, (sample = { labels, value: 0 }))
    return sample
  }

  family(): MetricFamily {
    return { name: this.name, help: this.help, type: 'counter', samples: [...this.values.values()].map((s) => ({ ...s })) }
  }
}

/** One labelled series of a histogram. */
export class HistogramSeries {
  /** Per bucket here, made cumulative in family(): one increment per observation. */
  readonly counts: number[]
  sum = 0
  count = 0

  constructor(
    readonly labels: Labels,
    private readonly buckets: number[],
  ) {
    this.counts = new Array<number>(buckets.length).fill(0)
  }

  observe(value: number): void {
    const { buckets } = this
    let i = 0
    while (i < buckets.length && value > buckets[i]!) i++
    if (i < buckets.length) this.counts[i]!++
    this.sum += value
    this.count++
  }
}

export class Histogram {
  private readonly values = new Map<string, HistogramSeries>()
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: number[],
  ) {}

  observe(labels: Labels, value: number): void {
    this.labels(labels).observe(value)
  }

  /** The series for these labels, to keep and observe directly: labels resolved once, not per call. */
  labels(labels: Labels): HistogramSeries {
    const key = keyOf(labels)
    let series = this.values.get(key)
    if (!series) this.values.set(key, (series = new HistogramSeries(labels, this.buckets)))
    return series
  }

  family(): MetricFamily {
    return {
      name: this.name,
      help: this.help,
      type: 'histogram',
      buckets: this.buckets,
      samples: [...this.values.values()].map((s) => {
        let running = 0
        return { labels: s.labels, counts: s.counts.map((c) => (running += c)), sum: s.sum, count: s.count }
      }),
    }
  }
}

/** A gauge read when metrics are collected (queue lengths, replicas up). */
export interface GaugeSource {
  name: string
  help: string
  read(): CounterSample[]
}

export class MetricsRegistry {
  private readonly metrics: (Counter | Histogram)[] = []
  private readonly gauges: GaugeSource[] = []

  counter(name: string, help: string): Counter {
    const metric = new Counter(name, help)
    this.metrics.push(metric)
    return metric
  }

  histogram(name: string, help: string, buckets: number[]): Histogram {
    const metric = new Histogram(name, help, buckets)
    this.metrics.push(metric)
    return metric
  }

  gauge(source: GaugeSource): void {
    this.gauges.push(source)
  }

  snapshot(): MetricsSnapshot {
    return [...this.metrics.map((m) => m.family()), ...this.gauges.map((g): MetricFamily => ({ name: g.name, help: g.help, type: 'gauge', samples: g.read() }))]
  }
}

export const SIZE_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256]
export const SECONDS_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
export const RATIO_BUCKETS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1]
