import {
  checkKnownOptions,
  formatReceived,
  getValidAdaptive,
  getValidPositiveInteger,
  getValidSeconds,
  type AdaptiveOptions,
  type ResolvedAdaptive,
} from '../batching/options.js'
import { DEFAULT_BODY_LIMIT } from './body/read.js'

/**
 * Ray Serve's `batching_config`: batch whole `fetch()` calls. The class's
 * `fetch` then receives `Request[]` and returns one response per request.
 * The options mean what `batch()`'s options of the same names mean.
 */
export interface BatchingConfig {
  /** Most requests in one call of `fetch`. Default 10. */
  maxBatchSize?: number | undefined
  /** Seconds to wait for a batch to fill once it starts forming. Default 0. */
  batchWaitTimeoutS?: number | undefined
  /** Seconds between batch formations; 0 reacts to every arrival. Default 0. */
  strideS?: number | undefined
  /** `false`: full batches only. Default true. */
  allowSmallBatch?: boolean | undefined
  /** `true` or `{ latencyTargetMs }`: the queue picks the batch size, `maxBatchSize` its upper bound. Default false. */
  adaptive?: boolean | AdaptiveOptions | undefined
  /**
   * Most bytes of a request's body. Each request's body is read whole before
   * the request joins a batch, so that one client sending slowly holds no
   * other request; a larger body is refused with 413. Default 1 MiB
   * (`DEFAULT_BODY_LIMIT`); `Infinity` for no limit.
   */
  maxBodyBytes?: number | undefined
}

/**
 * Options after validation: each one set. Not `Required<T>`, which under
 * `exactOptionalPropertyTypes` keeps the `| undefined` an option is declared
 * with (undefined there means "the default").
 */
type Resolved<T> = { [K in keyof T]-?: Exclude<T[K], undefined> }

/** A deployment's `batching` after validation, with defaults applied. */
export type ResolvedBatchingConfig = Resolved<Omit<BatchingConfig, 'adaptive'>> & { adaptive: ResolvedAdaptive }

/**
 * Ray Serve's `autoscaling_config`: the replica count follows the load. The
 * count wanted is `ceil(average ongoing requests / targetOngoingRequests)`,
 * the average taken over `lookBackPeriodS`, kept within min and max; it is
 * adopted once it has been wanted for `upscaleDelayS` (more replicas) or
 * `downscaleDelayS` (fewer). From zero replicas the first request starts one
 * at once and waits for it.
 */
export interface AutoscalingConfig {
  /** Fewest replicas; 0 lets an idle deployment scale to zero. Default 1. */
  minReplicas?: number | undefined
  /** Most replicas. Default 4. */
  maxReplicas?: number | undefined
  /** Replicas at start. Default: minReplicas. */
  initialReplicas?: number | undefined
  /** Ongoing requests (queued and running) per replica to aim for. Default 2. */
  targetOngoingRequests?: number | undefined
  /** Seconds more replicas must be wanted before they start. Default 5. */
  upscaleDelayS?: number | undefined
  /** Seconds fewer replicas must be wanted before one stops. Default 60. */
  downscaleDelayS?: number | undefined
  /** Seconds of load the average covers. Default 10. */
  lookBackPeriodS?: number | undefined
}

export type ResolvedAutoscalingConfig = Resolved<AutoscalingConfig>

export interface DeploymentOptions {
  /** Unique within an app; default: the class name. */
  name?: string | undefined
  /** Replicas to spread requests over. Default 1. Not together with `autoscaling`. */
  numReplicas?: number | undefined
  /** Requests one replica may hold at once; more wait in the router. Default 100. */
  maxOngoingRequests?: number | undefined
  /** Requests that may wait in one router for a replica; `Infinity` (default) is unbounded, as in `batch()`. */
  maxQueuedRequests?: number | undefined
  /** Seconds until a request fails with 504; undefined (default) means no limit. */
  requestTimeoutS?: number | undefined
  /** Batch whole `fetch()` calls (Ray's `batching_config`). */
  batching?: BatchingConfig | undefined
  /** Scale the replica count with the load (Ray's `autoscaling_config`), instead of a fixed `numReplicas`. */
  autoscaling?: AutoscalingConfig | undefined
  /** Workers: the Durable Object binding in wrangler.toml. Default: the deployment's name. */
  binding?: string | undefined
  /**
   * Workers: carry the requests and handle calls a Worker isolate sends one
   * replica at the same moment in one call to its Durable Object, where
   * their items are batched as though each had come alone. One hop and one
   * billed object request then serve many. Default true; `false` sends each
   * in a call of its own. No effect on Node.
   */
  coalesceCalls?: boolean | undefined
}

/**
 * The options of a deployment whose `fetch(requests: Request[])` takes a
 * batch of requests: it needs `batching`, which hands it one.
 */
export interface BatchedFetchOptions extends DeploymentOptions {
  batching: BatchingConfig
}

/**
 * What TypeScript says at `batching` for a class whose `fetch` takes one
 * `Request` (a string literal type is shown as its text).
 */
export type BatchingNeedsRequestList =
  'batching hands fetch a Request[] and expects one answer per request: declare fetch(requests: Request[]), or leave batching out for fetch(request: Request)'

/** The options of a deployment whose `fetch(request: Request)` takes one request: `batching` would hand it a list. */
export interface UnbatchedFetchOptions extends Omit<DeploymentOptions, 'batching'> {
  batching?: BatchingNeedsRequestList | undefined
}

export interface ResolvedDeploymentOptions {
  name: string
  /** The fixed count; with `autoscaling`, the most there can be (`maxReplicas`): replica names run 0 .. numReplicas - 1. */
  numReplicas: number
  maxOngoingRequests: number
  maxQueuedRequests: number
  requestTimeoutS: number | undefined
  batching: ResolvedBatchingConfig | undefined
  autoscaling: ResolvedAutoscalingConfig | undefined
  binding: string
  coalesceCalls: boolean
}

const KNOWN = ['name', 'numReplicas', 'maxOngoingRequests', 'maxQueuedRequests', 'requestTimeoutS', 'batching', 'autoscaling', 'binding', 'coalesceCalls']
const KNOWN_BATCHING = ['maxBatchSize', 'batchWaitTimeoutS', 'strideS', 'allowSmallBatch', 'adaptive', 'maxBodyBytes']
const KNOWN_AUTOSCALING = ['minReplicas', 'maxReplicas', 'initialReplicas', 'targetOngoingRequests', 'upscaleDelayS', 'downscaleDelayS', 'lookBackPeriodS']

/** Spellings of earlier versions, refused with the name to use instead. */
const RENAMED: Record<string, string> = { timeoutS: 'batchWaitTimeoutS' }

/** Ray's snake_case names, refused with ours. */
const RAY_SPELLINGS: Record<string, string> = {
  min_replicas: 'minReplicas',
  max_replicas: 'maxReplicas',
  initial_replicas: 'initialReplicas',
  target_ongoing_requests: 'targetOngoingRequests',
  upscale_delay_s: 'upscaleDelayS',
  downscale_delay_s: 'downscaleDelayS',
  look_back_period_s: 'lookBackPeriodS',
}

function checkKnown(where: string, options: object, known: string[]): void {
  checkKnownOptions(where, options, known, (key) => {
    if (key in RENAMED) return `${where}.${key} is now called ${RENAMED[key]}; rename it (the meaning is the same as in batch())`
    if (key in RAY_SPELLINGS) return `${where} has no option ${JSON.stringify(key)}; edgeserve spells Ray's ${key} as ${RAY_SPELLINGS[key]}`
    return undefined
  })
}

function getValidName(name: unknown): string {
  if (typeof name !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/.test(name)) {
    throw new TypeError(`deployment name must be 1-100 letters, digits, '_', '.' or '-', starting with a letter or digit, received ${formatReceived(name)}`)
  }
  return name
}

function getValidBatching(value: unknown): ResolvedBatchingConfig | undefined {
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
    adaptive: getValidAdaptive('batching.adaptive', config.adaptive),
    maxBodyBytes: getValidByteLimit('batching.maxBodyBytes', config.maxBodyBytes ?? DEFAULT_BODY_LIMIT),
  }
}

/** A number of bytes, 0 or more, or Infinity. */
function getValidByteLimit(name: string, value: unknown): number {
  if (typeof value !== 'number' || !(value === Infinity || (Number.isInteger(value) && value >= 0))) {
    throw new RangeError(`${name} must be a whole number of bytes, 0 or more (Infinity for no limit), received ${formatReceived(value)}`)
  }
  return value
}

/** A whole number of replicas, 0 or more. */
function getValidReplicaCount(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new RangeError(`${name} must be a whole number of replicas, 0 or more, received ${formatReceived(value)}`)
  }
  return value
}

function getValidAutoscaling(value: unknown, numReplicas: unknown): ResolvedAutoscalingConfig | undefined {
  if (value === undefined) return undefined
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new TypeError(`autoscaling must be an object like { minReplicas: 1, maxReplicas: 4 }, received ${formatReceived(value)}`)
  }
  if (numReplicas !== undefined) {
    throw new TypeError(
      `numReplicas and autoscaling cannot be used together: autoscaling sets the count. ` +
        `Remove numReplicas (${formatReceived(numReplicas)}), or remove autoscaling for a fixed count`,
    )
  }
  checkKnown('autoscaling', value, KNOWN_AUTOSCALING)
  const config = value as AutoscalingConfig
  const minReplicas = getValidReplicaCount('autoscaling.minReplicas', config.minReplicas ?? 1)
  const maxReplicas = getValidPositiveInteger('autoscaling.maxReplicas', config.maxReplicas ?? 4)
  if (minReplicas > maxReplicas) {
    throw new RangeError(
      `autoscaling.minReplicas (${minReplicas}) is more than maxReplicas (${maxReplicas}` +
        `${config.maxReplicas === undefined ? ', the default' : ''}); pass maxReplicas: ${minReplicas} or more`,
    )
  }
  const initialReplicas = getValidReplicaCount('autoscaling.initialReplicas', config.initialReplicas ?? minReplicas)
  if (initialReplicas < minReplicas || initialReplicas > maxReplicas) {
    throw new RangeError(`autoscaling.initialReplicas must be from minReplicas to maxReplicas (${minReplicas} to ${maxReplicas}), received ${initialReplicas}`)
  }
  const target = config.targetOngoingRequests ?? 2
  if (typeof target !== 'number' || !Number.isFinite(target) || target <= 0) {
    throw new RangeError(
      `autoscaling.targetOngoingRequests must be a number above 0 (ongoing requests per replica, e.g. 2, or maxBatchSize for a batched deployment), received ${formatReceived(target)}`,
    )
  }
  const lookBackPeriodS = getValidSeconds('autoscaling.lookBackPeriodS', config.lookBackPeriodS ?? 10)
  if (lookBackPeriodS === 0) throw new RangeError('autoscaling.lookBackPeriodS must be more than 0 seconds (the average needs a window), e.g. 10')
  return {
    minReplicas,
    maxReplicas,
    initialReplicas,
    targetOngoingRequests: target,
    upscaleDelayS: getValidSeconds('autoscaling.upscaleDelayS', config.upscaleDelayS ?? 5),
    downscaleDelayS: getValidSeconds('autoscaling.downscaleDelayS', config.downscaleDelayS ?? 60),
    lookBackPeriodS,
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
  if (options.name === undefined && className === '') {
    throw new TypeError("deployment() was given a class without a name: pass { name: 'MyDeployment' }, or name the class")
  }
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
  const autoscaling = getValidAutoscaling(options.autoscaling, options.numReplicas)
  const coalesceCalls = options.coalesceCalls ?? true
  if (typeof coalesceCalls !== 'boolean') {
    throw new TypeError(
      `coalesceCalls must be true (the default: a Worker carries its concurrent calls to a replica together) or false, received ${formatReceived(coalesceCalls)}`,
    )
  }
  return {
    name,
    numReplicas: autoscaling ? autoscaling.maxReplicas : getValidPositiveInteger('numReplicas', options.numReplicas ?? 1),
    maxOngoingRequests: getValidPositiveInteger('maxOngoingRequests', options.maxOngoingRequests ?? 100),
    maxQueuedRequests,
    requestTimeoutS,
    batching: getValidBatching(options.batching),
    autoscaling,
    binding,
    coalesceCalls,
  }
}
