/**
 * Browser code, shipped as text: turns two consecutive `/-/metrics.json`
 * snapshots into the numbers the dashboard shows.
 *
 * It is a string rather than a compiled module because the dashboard must be
 * served with no build step and no file reads (Workers have no `fs`); the
 * browser test checks these numbers against the server's own JSON. The code
 * avoids backticks and `${` so the template literal holding it stays inert.
 */
export const STATS_JS = /* js */ `
// ---- stats: aggregation, rates and quantiles ----------------------------

function familyOf(snapshot, name) {
  const list = snapshot && Array.isArray(snapshot.metrics) ? snapshot.metrics : []
  return list.find((family) => family && family.name === name)
}

function labelsMatch(labels, match) {
  for (const key in match) if (!labels || labels[key] !== match[key]) return false
  return true
}

/** Sum of the counter or gauge samples whose labels match; null when there are none yet. */
function sumValues(snapshot, name, match, keep) {
  const family = familyOf(snapshot, name)
  if (!family || !Array.isArray(family.samples)) return null
  let total = null
  for (const sample of family.samples) {
    if (labelsMatch(sample.labels, match) && (!keep || keep(sample.labels))) total = (total || 0) + Number(sample.value)
  }
  return total
}

/**
 * The matching samples of a histogram added up. Replicas (and origins) share
 * one family's bucket bounds, so their cumulative counts add element-wise,
 * as sum by (le) does in PromQL.
 */
function sumHistogram(snapshot, name, match) {
  const family = familyOf(snapshot, name)
  if (!family || family.type !== 'histogram' || !Array.isArray(family.samples)) return null
  let total = null
  for (const sample of family.samples) {
    if (!labelsMatch(sample.labels, match)) continue
    if (!total) total = { bounds: family.buckets, counts: family.buckets.map(() => 0), sum: 0, count: 0 }
    sample.counts.forEach((count, i) => { total.counts[i] += count })
    total.sum += sample.sum
    total.count += sample.count
  }
  return total
}

/** Distinct values of one label among a family's samples that match. */
function labelValues(snapshot, name, label, match) {
  const family = familyOf(snapshot, name)
  const found = new Set()
  if (family && Array.isArray(family.samples)) {
    for (const sample of family.samples) {
      if (labelsMatch(sample.labels, match) && sample.labels && typeof sample.labels[label] === 'string') found.add(sample.labels[label])
    }
  }
  return found
}

/**
 * What a histogram gained since the previous poll. A histogram absent from
 * the previous snapshot had no observations then; a shrinking one means the
 * server restarted, and then nothing short of the cumulative data is honest.
 */
function histogramDelta(current, previous, hadPrevious) {
  if (!current || !hadPrevious) return null
  if (!previous) return current
  if (previous.counts.length !== current.counts.length) return null
  const counts = current.counts.map((count, i) => count - previous.counts[i])
  const count = current.count - previous.count
  if (count < 0 || counts.some((c) => c < 0)) return null
  return { bounds: current.bounds, counts, sum: current.sum - previous.sum, count }
}

/** The last interval when it saw observations, else everything since start: a number is better than a blank. */
function recentOrAll(current, previous, hadPrevious) {
  const delta = histogramDelta(current, previous, hadPrevious)
  if (delta && delta.count > 0) return { histogram: delta, window: 'interval' }
  if (current && current.count > 0) return { histogram: current, window: 'cumulative' }
  return null
}

/**
 * Prometheus' histogram_quantile: find the bucket holding rank q * count and
 * interpolate linearly inside it. Observations beyond the last bound (the
 * +Inf bucket, which is count itself) report the last finite bound.
 */
function quantile(q, histogram) {
  if (!histogram || !(histogram.count > 0)) return null
  const { bounds, counts, count } = histogram
  const rank = q * count
  let i = 0
  while (i < bounds.length && counts[i] < rank) i++
  if (i === bounds.length) return bounds[bounds.length - 1]
  const upper = bounds[i]
  if (i === 0 && upper <= 0) return upper
  const lower = i === 0 ? 0 : bounds[i - 1]
  const below = i === 0 ? 0 : counts[i - 1]
  const inBucket = counts[i] - below
  return inBucket > 0 ? lower + (upper - lower) * ((rank - below) / inBucket) : upper
}

/** Per-second rate of a counter between polls; a drop means a restart, so count from zero. */
function rate(current, previous, seconds) {
  if (current === null || previous === undefined || !(seconds > 0)) return null
  const before = previous === null ? 0 : previous
  const delta = current - before
  return (delta >= 0 ? delta : current) / seconds
}

/** A counter's per-second rate and the window it covers, for a label selection. */
function counterRate(now, before, seconds, name, match, keep) {
  const current = sumValues(now, name, match, keep)
  return rate(current === null ? 0 : current, before ? sumValues(before, name, match, keep) : undefined, seconds)
}

/**
 * Everything the page shows, computed from the latest snapshot, the one
 * before it (or none) and /-/routes (or none). Pure: no DOM here.
 */
function buildModel(now, before, routes) {
  const seconds = before ? (now.time - before.time) / 1000 : 0
  const described = routes && Array.isArray(routes.deployments) ? routes.deployments : []
  const names = described.map((d) => String(d.name))
  for (const name of labelValues(now, 'edgeserve_requests_total', 'deployment', {})) if (!names.includes(name)) names.push(name)
  for (const name of labelValues(now, 'edgeserve_batch_size', 'deployment', {})) if (!names.includes(name)) names.push(name)

  return {
    time: now.time,
    seconds,
    deployments: names.map((name) => {
      const info = described.find((d) => String(d.name) === name) || {}
      const match = { deployment: name }
      const paths = routes && Array.isArray(routes.routes) ? routes.routes.filter((r) => r.deployment === name) : []
      const latency = recentOrAll(
        sumHistogram(now, 'edgeserve_request_duration_seconds', match),
        before && sumHistogram(before, 'edgeserve_request_duration_seconds', match),
        Boolean(before),
      )
      const failed = (labels) => Number(labels.status) >= 400
      const requestsRate = counterRate(now, before, seconds, 'edgeserve_requests_total', match)
      const failedRate = counterRate(now, before, seconds, 'edgeserve_requests_total', match, failed)
      const requestsTotal = sumValues(now, 'edgeserve_requests_total', match)
      const failedTotal = sumValues(now, 'edgeserve_requests_total', match, failed)

      const methodNames = Object.keys(info.batchedMethods || {})
      for (const method of labelValues(now, 'edgeserve_batch_size', 'method', match)) if (!methodNames.includes(method)) methodNames.push(method)
      methodNames.sort()

      return {
        name,
        routes: paths.map((r) => ({ method: String(r.method), path: String(r.path) })),
        options: info.options || {},
        replicas: labelValues(now, 'edgeserve_requests_total', 'replica', match).size || null,
        requestsRate,
        requestsTotal,
        // Failed share of the last interval's requests when there were any, else of all of them.
        failedShare: requestsRate ? failedRate / requestsRate : requestsTotal ? (failedTotal || 0) / requestsTotal : null,
        batchesRate: counterRate(now, before, seconds, 'edgeserve_batches_total', match),
        latency: latency && {
          window: latency.window,
          p50: quantile(0.5, latency.histogram),
          p95: quantile(0.95, latency.histogram),
          p99: quantile(0.99, latency.histogram),
        },
        methods: methodNames.map((method) => {
          const m = { deployment: name, method }
          const sizes = sumHistogram(now, 'edgeserve_batch_size', m)
          const recent = recentOrAll(sizes, before && sumHistogram(before, 'edgeserve_batch_size', m), Boolean(before))
          const fill = sumHistogram(now, 'edgeserve_batch_utilization', m)
          return {
            name: method,
            options: (info.batchedMethods && info.batchedMethods[method]) || {},
            sizes,
            meanSize: recent && { value: recent.histogram.sum / recent.histogram.count, window: recent.window },
            fill: fill && fill.count > 0 ? fill.sum / fill.count : null,
            batchesRate: counterRate(now, before, seconds, 'edgeserve_batches_total', m),
            batchesTotal: sumValues(now, 'edgeserve_batches_total', m),
            queueLength: sumValues(now, 'edgeserve_queue_length', m),
            inFlight: sumValues(now, 'edgeserve_batches_in_flight', m),
          }
        }),
      }
    }),
  }
}
`
