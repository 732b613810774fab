/**
 * The JSON the page polls, as src/http/admin.ts sends it. The metric
 * families are the server's own types; the routes body is restated here
 * because admin.ts's module graph is server code, not browser code.
 */
import type { MetricsSnapshot } from '../../../metrics/registry.js'

/** Options as the server reports them: numbers, words for Infinity, nested objects. */
export type Options = Record<string, unknown>

/** `GET /-/metrics.json` */
export interface MetricsBody {
  /** Milliseconds since the epoch, on the server's clock. */
  time: number
  metrics: MetricsSnapshot
}

/** `GET /-/routes` */
export interface RoutesBody {
  routes: { method: string; path: string; deployment: string }[]
  deployments: { name: string; options: Options; batchedMethods: Record<string, Options>; adaptive?: AdaptiveBody | null }[]
}

/** Methods with `adaptive` on one replica: the batch size each allows now and the mean ms of a batch at each size measured. */
export interface AdaptiveBody {
  replica: number
  methods: Record<string, { batchSizeLimit: number; costCurve: { size: number; ms: number }[] }>
}
