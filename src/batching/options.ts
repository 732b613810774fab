/**
 * Options of `batch()` and their validation.
 *
 * Every option is checked once, when `batch()` is called, so a typo fails at
 * start-up with a message that names the option, shows what was received and
 * says what to pass instead, rather than misbehaving under load.
 */

/** Ambient facts about a call, e.g. whether it came over HTTP or through a handle. */
export interface CallContext {
  /** `'http'` for requests through `ingress()`, `'handle'` for handle calls. */
  origin?: string | undefined
  /** The model a multiplexed deployment's request is for: calls for two models never share a batch. */
  multiplexedModelId?: string | undefined
  [key: string]: unknown
}

export type OnBatchError = 'fail-all' | 'isolate'

export interface BatchOptions<T> {
  /** Most items (or `batchSizeFn` units) in one call of the handler. Default 10. */
  maxBatchSize?: number | undefined
  /**
   * Seconds to wait for a batch to fill once its first item is taken.
   * Default 0: opportunistic, run what is queued now.
   */
  batchWaitTimeoutS?: number | undefined
  /** Batches of this queue that may run at the same time. Default 1. */
  maxConcurrentBatches?: number | undefined
  /** Items that may wait; beyond it calls fail at once with `BackPressureError`. Default Infinity. */
  maxQueuedRequests?: number | undefined
  /** Size of one item in custom units (tokens, pixels). Default: every item is 1. */
  batchSizeFn?: ((item: T) => number) | undefined
  /** Only items with equal keys share a batch (shape buckets, model ids, origin). */
  batchKey?: ((item: T, context: CallContext) => string) | undefined
  /** Seconds between batch formations; 0 (default) reacts to every arrival. */
  strideS?: number | undefined
  /** `false`: dispatch full batches only; each caller's deadline still bounds its wait. Default true. */
  allowSmallBatch?: boolean | undefined
  /** `'isolate'`: when the handler throws, split the batch to find the failing items. Default `'fail-all'`. */
  onBatchError?: OnBatchError | undefined
  /**
   * `true`: the queue picks the batch size (at most `maxBatchSize`) that
   * gives the most items per second, from the cost it measures per batch
   * size, and keeps measuring. `{ latencyTargetMs }`: and keeps the batch
   * size small enough that queueing plus running stays within the target
   * where the load allows. Default false: every batch may hold `maxBatchSize`.
   */
  adaptive?: boolean | AdaptiveOptions | undefined
}

export interface AdaptiveOptions {
  /** Milliseconds a call may spend queued and running, for the p99 to aim at. */
  latencyTargetMs?: number | undefined
}

/** `adaptive` after validation: false, or the settings of the adaptive batch size. */
export type ResolvedAdaptive = false | { latencyTargetMs: number | undefined }

/** Options after validation, with defaults applied. */
export interface ResolvedBatchOptions<T> {
  maxBatchSize: number
  batchWaitTimeoutS: number
  maxConcurrentBatches: number
  maxQueuedRequests: number
  // Method syntax, so that the options of a queue of any item type can be
  // read as those of a queue of `unknown` items (metrics, admin routes).
  batchSizeFn: { bivariant(item: T): number }['bivariant'] | undefined
  batchKey: { bivariant(item: T, context: CallContext): string }['bivariant'] | undefined
  strideS: number
  allowSmallBatch: boolean
  onBatchError: OnBatchError
  adaptive: ResolvedAdaptive
}

const KNOWN_OPTIONS = [
  'maxBatchSize',
  'batchWaitTimeoutS',
  'maxConcurrentBatches',
  'maxQueuedRequests',
  'batchSizeFn',
  'batchKey',
  'strideS',
  'allowSmallBatch',
  'onBatchError',
  'adaptive',
]

/**
 * A value as an error message shows it after "received" or "returned":
 * strings quoted, objects and functions named by kind, never dumped whole.
 */
export function formatReceived(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'function') return 'a function'
  if (typeof value === 'bigint') return `${value}n`
  if (Array.isArray(value)) return 'an array'
  if (value === null || typeof value !== 'object') return String(value)
  return 'an object'
}

export function getValidPositiveInteger(name: string, value: unknown): number {
  if (typeof value !== 'number') {
    throw new TypeError(`${name} must be a positive integer, received ${formatReceived(value)}`)
  }
  if (!Number.isInteger(value) || value < 1) {
    throw new RangeError(`${name} must be a positive integer (1, 2, 3, ...), received ${formatReceived(value)}`)
  }
  return value
}

export function getValidSeconds(name: string, value: unknown): number {
  if (typeof value !== 'number') {
    throw new TypeError(`${name} must be a number of seconds (0 or more), received ${formatReceived(value)}`)
  }
  if (!Number.isFinite(value) || value < 0) {
    throw new RangeError(`${name} must be a finite number of seconds, 0 or more, received ${formatReceived(value)}`)
  }
  return value
}

function getValidQueueLimit(value: unknown): number {
  if (value === Infinity) return value
  if (typeof value !== 'number') {
    throw new TypeError(`maxQueuedRequests must be a positive integer or Infinity, received ${formatReceived(value)}`)
  }
  if (!Number.isInteger(value) || value < 1) {
    throw new RangeError(`maxQueuedRequests must be a positive integer or Infinity (unbounded), received ${formatReceived(value)}`)
  }
  return value
}

function getValidFunction<F>(name: string, value: unknown, shape: string): F | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'function') {
    throw new TypeError(`${name} must be a function ${shape}, received ${formatReceived(value)}`)
  }
  return value as F
}

/**
 * Refuse an option `where` does not know, naming the ones it does. `hint`
 * gives the whole message for a name it recognizes from elsewhere (Ray
 * Serve's spelling, an earlier version's).
 */
export function checkKnownOptions(where: string, options: object, known: readonly string[], hint?: (key: string) => string | undefined): void {
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue
    const list = known.length === 1 ? `its one option is ${known[0]}` : `known options: ${known.join(', ')}`
    throw new TypeError(hint?.(key) ?? `${where} has no option ${JSON.stringify(key)}; ${list}`)
  }
}

/**
 * `adaptive`: `false`, `true`, or `{ latencyTargetMs }`. `name` is how the
 * message names it (`batching.adaptive` in a deployment's config).
 */
export function getValidAdaptive(name: string, value: unknown): ResolvedAdaptive {
  if (value === undefined || value === false) return false
  if (value === true) return { latencyTargetMs: undefined }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new TypeError(`${name} must be true, false or an object like { latencyTargetMs: 50 }, received ${formatReceived(value)}`)
  }
  checkKnownOptions(name, value, ['latencyTargetMs'])
  const target = (value as AdaptiveOptions).latencyTargetMs
  if (target === undefined) return { latencyTargetMs: undefined }
  if (typeof target !== 'number') {
    throw new TypeError(`${name}.latencyTargetMs must be a number of milliseconds, e.g. { latencyTargetMs: 50 }, received ${formatReceived(target)}`)
  }
  if (!Number.isFinite(target) || target <= 0) {
    throw new RangeError(`${name}.latencyTargetMs must be a finite number of milliseconds greater than 0, received ${formatReceived(target)}`)
  }
  return { latencyTargetMs: target }
}

/** Only `undefined` means "use the default": a `null` is a mistake worth reporting. */
function orDefault<V>(value: V | undefined, fallback: V): V {
  return value === undefined ? fallback : value
}

export function getValidOptions<T>(options: BatchOptions<T> | undefined): ResolvedBatchOptions<T> {
  if (options === undefined) options = {}
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`batch() options must be an object, received ${formatReceived(options)}`)
  }
  checkKnownOptions('batch()', options, KNOWN_OPTIONS)
  const allowSmallBatch = orDefault(options.allowSmallBatch, true)
  if (typeof allowSmallBatch !== 'boolean') {
    throw new TypeError(`allowSmallBatch must be true or false, received ${formatReceived(allowSmallBatch)}`)
  }
  const onBatchError = orDefault<OnBatchError>(options.onBatchError, 'fail-all')
  if (onBatchError !== 'fail-all' && onBatchError !== 'isolate') {
    throw new TypeError(`onBatchError must be 'fail-all' or 'isolate', received ${formatReceived(onBatchError)}`)
  }
  return {
    maxBatchSize: getValidPositiveInteger('maxBatchSize', orDefault(options.maxBatchSize, 10)),
    batchWaitTimeoutS: getValidSeconds('batchWaitTimeoutS', orDefault(options.batchWaitTimeoutS, 0)),
    maxConcurrentBatches: getValidPositiveInteger('maxConcurrentBatches', orDefault(options.maxConcurrentBatches, 1)),
    maxQueuedRequests: getValidQueueLimit(orDefault(options.maxQueuedRequests, Infinity)),
    batchSizeFn: getValidFunction('batchSizeFn', options.batchSizeFn, '(item) => number'),
    batchKey: getValidFunction('batchKey', options.batchKey, '(item, context) => string'),
    strideS: getValidSeconds('strideS', orDefault(options.strideS, 0)),
    allowSmallBatch,
    onBatchError,
    adaptive: getValidAdaptive('adaptive', options.adaptive),
  }
}
