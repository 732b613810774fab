import { formatReceived, getValidPositiveInteger, getValidSeconds } from '../batching/options.js'

/**
 * Ray Serve's `batching_config`: batch whole `fetch()` calls. The class's
 * `fetch` then receives `Request[]` and returns one response per request.
 * The options mean what `batch()`'s options of the same names mean.
 */
export interface BatchingConfig {
  /** Most requests in one call of `fetch`. Default 10. */
  maxBatchSize?: number
  /** Seconds to wait for a batch to fill once it starts forming. Default 0. */
  batchWaitTimeoutS?: number
  /** Seconds between batch formations; 0 reacts to every arrival. Default 0. */
  strideS?: number
  /** `false`: full batches only. Default true. */
  allowSmallBatch?: boolean
}

export interface DeploymentOptions {
  /** Unique within an app; default: the class name. */
  name?: string
  /** Replicas to spread requests over. Default 1. */
  numReplicas?: number
  /** Requests one replica may hold at once; more wait in the router. Default 100. */
  maxOngoingRequests?: number
  /** Requests that may wait in one router for a replica; `Infinity` (default) is unbounded, as in `batch()`. */
  maxQueuedRequests?: number
  /** Seconds until a request fails with 504; undefined (default) means no limit. */
  requestTimeoutS?: number
  /** Batch whole `fetch()` calls (Ray's `batching_config`). */
  batching?: BatchingConfig
  /** Workers: the Durable Object binding in wrangler.toml. Default: the deployment's name. */
  binding?: string
}

export interface ResolvedDeploymentOptions {
  name: string
  numReplicas: number
  maxOngoingRequests: number
  maxQueuedRequests: number
  requestTimeoutS: number | undefined
  batching: Required<BatchingConfig> | undefined
  binding: string
}

const KNOWN = ['name', 'numReplicas', 'maxOngoingRequests', 'maxQueuedRequests', 'requestTimeoutS', 'batching', 'binding']
const KNOWN_BATCHING = ['maxBatchSize', 'batchWaitTimeoutS', 'strideS', 'allowSmallBatch']

/** Spellings of earlier versions, refused with the name to use instead. */
const RENAMED: Record<string, string> = { timeoutS: 'batchWaitTimeoutS' }

function checkKnown(where: string, options: object, known: string[]): void {
  for (const key of Object.keys(options)) {
    if (key in RENAMED && !known.includes(key)) {
      throw new TypeError(`${where}.${key} is now called ${RENAMED[key]}; rename it (the meaning is the same as in batch())`)
    }
    if (!known.includes(key)) {
      throw new TypeError(`${where} has no option ${JSON.stringify(key)}; known options: ${known.join(', ')}`)
    }
  }
}

function getValidName(name: unknown): string {
  if (typeof name !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/.test(name)) {
    throw new TypeError(
      `deployment name must be 1-100 letters, digits, '_', '.' or '-', starting with a letter or digit, received ${formatReceived(name)}`,
    )
  }
  return name
}

function getValidBatching(value: unknown): Required<BatchingConfig> | undefined {
  if (value === undefined) return undefined
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new TypeError(`batching must be an object like { maxBatchSize: 32, batchWaitTimeoutS: 0.1 }, received ${formatReceived(value)}`)
  }
  checkKnown('batching', value, KNOWN_BATCHING)
  const config = value as BatchingConfig
  const allowSmallBatch = config.allowSmallBatch ?? true
  if (typeof allowSmallBatch !== 'boolean') {
    throw new TypeError(`batching.allowSmallBatch must be true or false, received ${formatReceived(allowSmallBatch)}`)
  }
  return {
    maxBatchSize: getValidPositiveInteger('batching.maxBatchSize', config.maxBatchSize ?? 10),
    batchWaitTimeoutS: getValidSeconds('batching.batchWaitTimeoutS', config.batchWaitTimeoutS ?? 0),
    strideS: getValidSeconds('batching.strideS', config.strideS ?? 0),
    allowSmallBatch,
  }
}

/** `Infinity` (the default) or a positive integer; the old `-1` is refused with the new spelling. */
function getValidQueueLimit(value: unknown): number {
  if (value === undefined || value === Infinity) return Infinity
  if (value === -1) {
    throw new RangeError('maxQueuedRequests: -1 no longer means unbounded; pass Infinity (or leave it out), as in batch()')
  }
  return getValidPositiveInteger('maxQueuedRequests (or Infinity for unbounded)', value)
}

export function getValidDeploymentOptions(options: DeploymentOptions | undefined, className: string): ResolvedDeploymentOptions {
  options ??= {}
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`deployment() options must be an object, received ${formatReceived(options)}`)
  }
  checkKnown('deployment()', options, KNOWN)
  const name = getValidName(options.name ?? className)
  const maxQueuedRequests = getValidQueueLimit(options.maxQueuedRequests)
  const requestTimeoutS = options.requestTimeoutS
  if (requestTimeoutS !== undefined) {
    getValidSeconds('requestTimeoutS', requestTimeoutS)
    if (requestTimeoutS === 0) throw new RangeError('requestTimeoutS must be more than 0 seconds; leave it out for no limit')
  }
  const binding = options.binding ?? name
  if (typeof binding !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(binding)) {
    throw new TypeError(
      `binding must be a valid wrangler binding name (letters, digits, '_'), received ${formatReceived(binding)}; ` +
        'pass { binding: "MY_DO" } when the deployment name is not one',
    )
  }
  return {
    name,
    numReplicas: getValidPositiveInteger('numReplicas', options.numReplicas ?? 1),
    maxOngoingRequests: getValidPositiveInteger('maxOngoingRequests', options.maxOngoingRequests ?? 100),
    maxQueuedRequests,
    requestTimeoutS,
    batching: getValidBatching(options.batching),
    binding,
  }
}
