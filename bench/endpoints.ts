/**
 * The endpoints the bench loads, all served by one app (bench/apps/app.ts
 * on Node, bench/worker.ts under wrangler dev): what each row POSTs or GETs,
 * and which deployment's batch metrics belong to it.
 */
import { readFileSync } from 'node:fs'
import type { LoadSpec } from './http.js'
import { ROOT } from './lib.js'

export interface Endpoint {
  name: string
  path: string
  body?: Buffer | string
  contentType?: string
  /** The deployment whose batches the row reads from /-/metrics.json. */
  deployment?: string
}

const png = readFileSync(`${ROOT}/test/fixtures/ocr/hello-world.png`)
const mlpBody = JSON.stringify({ features: [8.3, 41, 6.9, 1.0, 322, 2.5, 37.88, -122.23] })

export const ENDPOINTS = {
  hello: { name: 'hono-hello', path: '/hello' },
  /** Workers only: workerd's hop into a Durable Object with no edgeserve on either side (apps/raw-hop.ts). */
  rawHop: { name: 'raw-hop', path: '/raw-hop' },
  /** Workers only: the same answer through a Workers RPC call instead of stub.fetch. */
  rawRpc: { name: 'raw-rpc', path: '/raw-rpc' },
  noop: { name: 'noop-deployment', path: '/noop', deployment: 'NoOp' },
  noopBatched: { name: 'noop-batched-deployment', path: '/noop-batched', deployment: 'BatchedNoOp' },
  ocrUnbatched: { name: 'ocr-unbatched', path: '/ocr-unbatched', body: png, contentType: 'image/png', deployment: 'OcrUnbatched' },
  ocrBatched: { name: 'ocr-batched', path: '/ocr', body: png, contentType: 'image/png', deployment: 'TextDirectionClassifier' },
  /** Workers only: the OCR direction classifier run in the Worker for each request, no object and no batching (apps/in-worker.ts). */
  ocrInWorker: { name: 'ocr-in-worker', path: '/ocr-in-worker', body: png, contentType: 'image/png' },
  honoJson: { name: 'hono-json', path: '/predict-hono', body: mlpBody, contentType: 'application/json' },
  /** Workers only: the house-price POST forwarded to an object that reads its JSON, nothing of edgeserve on either side. */
  rawHopJson: { name: 'raw-hop-json', path: '/raw-hop-json', body: mlpBody, contentType: 'application/json' },
  /** Workers only: the house-price model run in the Worker for each request, no object and no batching (apps/in-worker.ts). */
  mlpInWorker: { name: 'mlp-in-worker', path: '/predict-in-worker', body: mlpBody, contentType: 'application/json' },
  mlpUnbatched: { name: 'mlp-unbatched', path: '/predict-unbatched', body: mlpBody, contentType: 'application/json', deployment: 'MlpUnbatched' },
  mlpBatched: { name: 'mlp-batched', path: '/predict', body: mlpBody, contentType: 'application/json', deployment: 'HousePricePredictor' },
  /** The MLP as shipped with one call into its object per request (`coalesceCalls: false`), where mlp-batched gathers a Worker's concurrent calls into one. */
  mlpSingleCalls: {
    name: 'mlp-single-calls',
    path: '/predict-single-calls',
    body: mlpBody,
    contentType: 'application/json',
    deployment: 'HousePriceSingleCalls',
  },
  /** mlp-batched-wait0 with one call into its object per request: the c=1 pair for what gathering adds to a lone request. */
  mlpT0SingleCalls: {
    name: 'mlp-wait0-single-calls',
    path: '/predict-t0-single-calls',
    body: mlpBody,
    contentType: 'application/json',
    deployment: 'HousePriceT0SingleCalls',
  },
  jsonHelpers: { name: 'json-helpers', path: '/json-helpers', body: mlpBody, contentType: 'application/json', deployment: 'JsonHelpers' },
  jsonWeb: { name: 'json-web', path: '/json-web', body: mlpBody, contentType: 'application/json', deployment: 'JsonWeb' },
  mlpBatchedT0: { name: 'mlp-batched-wait0', path: '/predict-t0', body: mlpBody, contentType: 'application/json', deployment: 'HousePriceT0' },
} satisfies Record<string, Endpoint>

/**
 * The rows of the adaptive comparison: `model`'s example at each fixed batch size
 * (bench/apps/batch-sizes.ts), then as shipped (adaptive).
 */
export function batchSizeEndpoints(model: 'ocr' | 'mlp', sizes: readonly number[]): Endpoint[] {
  const shipped = model === 'ocr' ? ENDPOINTS.ocrBatched : ENDPOINTS.mlpBatched
  const fixed = sizes.map((n) => ({
    ...shipped,
    name: `${model}-fixed-${n}`,
    path: `/sizes/${model}/${n}`,
    deployment: `${model === 'ocr' ? 'Ocr' : 'Mlp'}Fixed${n}`,
  }))
  return [...fixed, { ...shipped, name: `${model}-adaptive` }]
}

/** One request first, so that model loading is not measured; fails loudly on a bad answer. */
export async function prime(base: string, endpoint: Endpoint): Promise<void> {
  const first = await fetch(base + endpoint.path, {
    method: endpoint.body === undefined ? 'GET' : 'POST',
    ...(endpoint.body === undefined ? {} : { body: new Uint8Array(Buffer.from(endpoint.body)), headers: { 'content-type': endpoint.contentType! } }),
  })
  if (!first.ok) throw new Error(`${base}${endpoint.path}: ${first.status} ${await first.text()}`)
  await first.arrayBuffer()
}

/** The load row for `endpoint` on the server at `base`: its path, body and deployment, with the row's own settings. */
export function loadSpec(endpoint: Endpoint, base: string, row: Omit<LoadSpec, 'base' | 'path' | 'body' | 'contentType' | 'deployment'>): LoadSpec {
  return {
    ...row,
    base,
    path: endpoint.path,
    ...(endpoint.body === undefined ? {} : { body: endpoint.body, contentType: endpoint.contentType! }),
    ...(endpoint.deployment === undefined ? {} : { deployment: endpoint.deployment }),
  }
}
