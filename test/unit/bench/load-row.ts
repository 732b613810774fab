import type { LoadRow } from '../../../bench/http.js'

/** A load row as bench/http.ts writes one, for the bench's unit tests: the fields a test gives, and plain defaults for the rest. */
export function loadRow(fields: Partial<LoadRow> & Pick<LoadRow, 'requestsPerS'>): LoadRow {
  return {
    target: 'workerd-direct',
    path: '/',
    connections: 64,
    p50Ms: 1,
    p99Ms: 2,
    errors: 0,
    non2xx: 0,
    meanBatchSize: null,
    batchItemsPerS: null,
    loadGeneratorCores: 0.1,
    serverCores: 1,
    repeats: 1,
    roundsRequestsPerS: [fields.requestsPerS],
    probeP50Ms: null,
    probeP99Ms: null,
    probes: null,
    ...fields,
  }
}
