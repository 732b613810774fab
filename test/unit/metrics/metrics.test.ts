import { describe, expect, it, vi } from 'vitest'
import { batch, type BatchControls, type QueueObserver } from '../../../src/index.js'
import { mergeSnapshots, renderPrometheus } from '../../../src/metrics/prometheus.js'
import { MetricsRegistry } from '../../../src/metrics/registry.js'
import { ReplicaMetrics } from '../../../src/metrics/replica-metrics.js'

describe('metrics registry and Prometheus text', () => {
  it('renders counters and cumulative histogram buckets with escaped labels', () => {
    const registry = new MetricsRegistry()
    const counter = registry.counter('x_total', 'Things.')
    counter.inc({ route: 'a"b\\c\nd' }, 2)
    counter.inc({ route: 'a"b\\c\nd' })
    const histogram = registry.histogram('x_seconds', 'Time.', [0.1, 1])
    for (const v of [0.05, 0.5, 0.5, 3]) histogram.observe({ m: 'f' }, v)
    registry.gauge({ name: 'x_queue', help: 'Waiting.', read: () => [{ labels: { m: 'f' }, value: 7 }] })
    const text = renderPrometheus(registry.snapshot())
    expect(text).toContain('# TYPE x_total counter\nx_total{route="a\\"b\\\\c\\nd"} 3')
    expect(text).toContain('x_seconds_bucket{m="f",le="0.1"} 1\nx_seconds_bucket{m="f",le="1"} 3\nx_seconds_bucket{m="f",le="+Inf"} 4')
    expect(text).toContain('x_seconds_sum{m="f"} 4.05\nx_seconds_count{m="f"} 4')
    expect(text).toContain('# TYPE x_queue gauge\nx_queue{m="f"} 7')
  })

  it('merges snapshots from several replicas into one family each', () => {
    const a = new MetricsRegistry()
    a.counter('y_total', 'Y.').inc({ replica: '0' })
    const b = new MetricsRegistry()
    b.counter('y_total', 'Y.').inc({ replica: '1' }, 5)
    const text = renderPrometheus(mergeSnapshots([a.snapshot(), b.snapshot()]))
    expect(text.match(/# TYPE y_total/g)).toHaveLength(1)
    expect(text).toContain('y_total{replica="0"} 1\ny_total{replica="1"} 5')
  })
})

describe('replica metrics', () => {
  it('observes batch sizes, waits, executions, queue lengths and requests of an instance', async () => {
    class Model {
      predict = batch(
        async (xs: number[]) => {
          await new Promise((resolve) => setTimeout(resolve, 5))
          return xs
        },
        { maxBatchSize: 4 },
      )
    }
    const instance = new Model()
    const metrics = new ReplicaMetrics('Model', 0)
    metrics.attach(instance)
    await Promise.all([1, 2, 3, 4, 5].map((x) => instance.predict(x)))
    metrics.requestMeter('http').record(200, 0.01)
    const families = Object.fromEntries(metrics.snapshot().map((f) => [f.name, f]))
    const sizes = families.edgeserve_batch_size!
    expect(sizes.type).toBe('histogram')
    const sample = sizes.samples[0] as { labels: Record<string, string>; count: number; sum: number }
    expect(sample.labels).toEqual({ deployment: 'Model', replica: '0', method: 'predict' })
    expect(sample.sum).toBe(5)
    expect(sample.count).toBe(instance.predict.stats().batchesRun)
    const batches = families.edgeserve_batches_total!.samples[0] as { value: number }
    expect(batches.value).toBe(sample.count)
    const queue = families.edgeserve_request_queue_seconds!.samples[0] as { count: number }
    expect(queue.count).toBe(5)
    expect((families.edgeserve_queue_length!.samples[0] as { value: number }).value).toBe(0)
    expect(families.edgeserve_requests_total!.samples[0]).toEqual({
      labels: { deployment: 'Model', replica: '0', origin: 'http', status: '200' },
      value: 1,
    })
    // Every batch is also timed and measured against maxBatchSize: the
    // bench reads its batches' own speed from the execution time.
    type Series = { count: number; sum: number }
    const series = (name: string) => families[name]!.samples[0] as Series
    expect(series('edgeserve_batch_execution_seconds').count).toBe(sample.count)
    expect(series('edgeserve_batch_execution_seconds').sum).toBeGreaterThan(0)
    expect(series('edgeserve_batch_wait_seconds').count).toBe(sample.count)
    // 5 items over batches of at most 4: their shares of a full batch sum to 5/4.
    expect(series('edgeserve_batch_utilization').sum).toBeCloseTo(5 / 4)
  })

  it("reads each queue's batch size limit into edgeserve_batch_size_limit", async () => {
    const instance = {
      fixed: batch(async (xs: number[]) => xs, { maxBatchSize: 4 }),
      tuned: batch(async (xs: number[]) => xs, { maxBatchSize: 64, adaptive: true }),
    }
    const metrics = new ReplicaMetrics('Model', 0)
    metrics.attach(instance)
    await Promise.all([1, 2, 3].map((x) => instance.tuned(x)))
    const family = metrics.snapshot().find((f) => f.name === 'edgeserve_batch_size_limit')!
    expect(family.type).toBe('gauge')
    const byMethod = new Map(family.samples.map((s) => [s.labels.method, (s as { value: number }).value]))
    expect(byMethod.get('fixed')).toBe(4)
    expect(byMethod.get('tuned')).toBe(instance.tuned.stats().batchSizeLimit)
  })

  it('logs the adaptive limit when it moves by more than a factor of two since last logged', () => {
    let observer: QueueObserver | undefined
    const controls = {
      stats: () => ({ queueLength: 0, batchesRun: 0, itemsRun: 0, meanBatchSize: 0, batchesInFlight: 0, batchSizeLimit: 8 }),
      options: { maxBatchSize: 64 },
      observe: (o: QueueObserver | undefined) => (observer = o),
    } as unknown as BatchControls<unknown>
    new ReplicaMetrics('Model', 1).watch('predict', controls)
    const lines: string[] = []
    const spy = vi.spyOn(console, 'log').mockImplementation((line: string) => void lines.push(line))
    try {
      for (const [from, to] of [
        [8, 11],
        [11, 16],
        [16, 23],
        [23, 32],
        [32, 23],
        [23, 8],
      ])
        observer!.limitChanged!(from!, to!, undefined)
    } finally {
      spy.mockRestore()
    }
    const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(logged.map(({ event, from, to }) => ({ event, from, to }))).toEqual([
      { event: 'batch size limit', from: 8, to: 23 },
      { event: 'batch size limit', from: 23, to: 8 },
    ])
    expect(logged[0]).toMatchObject({ level: 'info', deployment: 'Model', replica: 1, method: 'predict', maxBatchSize: 64 })
  })

  it("a batch's wait is its oldest call's", async () => {
    const model = {
      predict: batch(async (xs: number[]) => xs, { maxBatchSize: 2, batchWaitTimeoutS: 10 }),
    }
    const metrics = new ReplicaMetrics('Model', 0)
    metrics.attach(model)
    // The batch starts when its second call fills it, some 20 ms after the
    // first: it waited at least from just after the first call to just
    // before the second, as this test's own clock reads them.
    const first = model.predict(1)
    const afterFirst = performance.now()
    await new Promise((resolve) => setTimeout(resolve, 20))
    const beforeSecond = performance.now()
    await Promise.all([first, model.predict(2)])
    const wait = metrics.snapshot().find((f) => f.name === 'edgeserve_batch_wait_seconds')!.samples[0] as { count: number; sum: number }
    expect(wait.count).toBe(1)
    expect(wait.sum * 1000).toBeGreaterThanOrEqual(beforeSecond - afterFirst)
  })
})
