/**
 * Model multiplexing, as Ray Serve's `@serve.multiplexed`: one deployment
 * serves many models (a fine-tune per customer, a regressor per region),
 * each replica holding the few it was last asked for.
 *
 * ```ts
 * class RegionalPrices {
 *   getModel = multiplexed((region: string) => loadModel(modelPath(region)), { maxModelsPerReplica: 2 })
 *   async fetch(request: Request) {
 *     const model = await this.getModel(multiplexedModelId())
 *     ...
 *   }
 * }
 * ```
 *
 * The id comes from the request's `edgeserve-multiplexed-model-id` header or
 * from `handle.options({ multiplexedModelId })`; the router sends requests
 * for a model to the replica that has it (see router.ts), and a batch never
 * mixes two models' calls.
 */
import { currentContext } from '../batching/context.js'
import { checkKnownOptions, formatReceived } from '../batching/options.js'
import { HTTPError } from '../errors.js'
import { log } from '../metrics/log.js'
import type { ModelCacheObserver, ObservedModelCache } from '../metrics/replica-metrics.js'
import { raceTimeout } from './request-scope.js'
import { checkModelId, MODEL_ID_HEADER } from './model-id.js'

const DEFAULT_MAX_MODELS_PER_REPLICA = 3
/** The longest an evicted model's `release()` or `dispose()` may take before it is given up on. */
const RELEASE_TIMEOUT_MS = 30_000

/**
 * The model id of the request (or batch) being served, for `getModel(multiplexedModelId())`.
 *
 * Throws a 400 when the request names no model, and an Error when called
 * outside any request a replica serves (a constructor, a timer).
 */
export function multiplexedModelId(): string {
  const context = currentContext()
  if (!context) {
    throw new Error('multiplexedModelId() tells the model of the request being served; call it inside a deployment method, not outside a request')
  }
  const id = context.multiplexedModelId
  if (id === undefined) {
    throw new HTTPError(400, `this request names no model: send the ${MODEL_ID_HEADER} header, or call through handle.options({ multiplexedModelId })`)
  }
  return id
}

export interface MultiplexedOptions {
  /**
   * Models one replica keeps loaded; past it the least recently used is
   * evicted, once no request for it is running. Default 3, as in Ray Serve.
   */
  maxModelsPerReplica?: number | undefined
}

const cacheOf = Symbol('edgeserve.multiplexed')

/** The function `multiplexed()` returns: the model for an id, loaded at most once while it is kept. */
export type MultiplexedFunction<M> = ((modelId: string) => Promise<M>) & { readonly [cacheOf]: ModelCache<M> }

/**
 * `load(modelId)` behind a per-replica cache of at most `maxModelsPerReplica`
 * models. Concurrent calls for one id share one load; a failed load is not
 * kept, so the next call tries again. An evicted model's `release()` (an
 * onnxruntime session's) or else `dispose()` is called, once no request for
 * it is running on the replica.
 */
export function multiplexed<M>(load: (modelId: string) => M | Promise<M>, options: MultiplexedOptions = {}): MultiplexedFunction<M> {
  if (typeof load !== 'function') {
    throw new TypeError(`multiplexed() takes the function that loads a model by id, (modelId: string) => model; received ${typeof load}`)
  }
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`multiplexed()'s options must be an object such as { maxModelsPerReplica: 3 }; received ${String(options)}`)
  }
  checkKnownOptions('multiplexed()', options, ['maxModelsPerReplica'], (key) =>
    key === 'maxNumModelsPerReplica' || key === 'max_num_models_per_replica'
      ? `multiplexed() has no option ${JSON.stringify(key)}; edgeserve spells Ray's max_num_models_per_replica as maxModelsPerReplica`
      : undefined,
  )
  const max = options.maxModelsPerReplica ?? DEFAULT_MAX_MODELS_PER_REPLICA
  if (typeof max !== 'number' || !Number.isInteger(max) || max < 1) {
    throw new TypeError(`maxModelsPerReplica must be a whole number of at least 1, received ${formatReceived(max)}`)
  }
  const cache = new ModelCache(load, max)
  const get = (modelId: string) => cache.get(checkModelId(modelId, 'the model id passed to a multiplexed function'))
  return Object.assign(get, { [cacheOf]: cache })
}

/** The model caches of an instance's multiplexed fields (`getModel = multiplexed(...)`). */
export function modelCachesOf(instance: object): ModelCache<unknown>[] {
  const found: ModelCache<unknown>[] = []
  for (const name of Object.keys(instance)) {
    const value = (instance as Record<string, unknown>)[name]
    if (typeof value === 'function' && cacheOf in value) found.push((value as MultiplexedFunction<unknown>)[cacheOf])
  }
  return found
}

interface Kept<M> {
  readonly model: Promise<M>
  loaded: boolean
}

export class ModelCache<M> implements ObservedModelCache {
  /** Oldest use first: a Map keeps insertion order, and a use re-inserts. */
  private readonly kept = new Map<string, Kept<M>>()
  /** Requests for each model id running on this replica now: their model is not evicted under them. */
  private readonly inUse = new Map<string, number>()
  observer: ModelCacheObserver | undefined = undefined

  constructor(
    private readonly load: (modelId: string) => M | Promise<M>,
    readonly maxModels: number,
  ) {}

  get(modelId: string): Promise<M> {
    const hit = this.kept.get(modelId)
    if (hit) {
      this.kept.delete(modelId)
      this.kept.set(modelId, hit)
      return hit.model
    }
    this.observer?.loadStarted()
    const entry: Kept<M> = { model: Promise.resolve().then(() => this.load(modelId)), loaded: false }
    this.kept.set(modelId, entry)
    entry.model.then(
      () => {
        entry.loaded = true
        this.evictOverflow()
      },
      () => {
        // Not kept: the next request for it loads it again.
        if (this.kept.get(modelId) === entry) this.kept.delete(modelId)
      },
    )
    return entry.model
  }

  /** A request for `modelId` begins on this replica. */
  pin(modelId: string): void {
    this.inUse.set(modelId, (this.inUse.get(modelId) ?? 0) + 1)
  }

  /** ... and ends: a model kept past the limit for it may go now. */
  unpin(modelId: string): void {
    const left = (this.inUse.get(modelId) ?? 1) - 1
    if (left > 0) {
      this.inUse.set(modelId, left)
      return
    }
    this.inUse.delete(modelId)
    if (this.kept.size > this.maxModels) this.evictOverflow()
  }

  /** Loaded model ids, least recently used first. */
  ids(): string[] {
    return [...this.kept].filter(([, entry]) => entry.loaded).map(([id]) => id)
  }

  /** Models loaded and kept now. */
  get loaded(): number {
    let count = 0
    for (const entry of this.kept.values()) if (entry.loaded) count++
    return count
  }

  /** The replica stops: release every model. */
  async clear(): Promise<void> {
    const entries = [...this.kept]
    this.kept.clear()
    await Promise.all(
      entries.map(([id, entry]) =>
        entry.model.then(
          (model) => release(id, model),
          () => undefined,
        ),
      ),
    )
  }

  /**
   * Evict least recently used models, loaded and not in use, until at most
   * `maxModels` are kept. Never the most recently used: it was just asked for.
   */
  private evictOverflow(): void {
    let newest: string | undefined
    for (const id of this.kept.keys()) newest = id
    for (const [id, entry] of this.kept) {
      if (this.kept.size <= this.maxModels || id === newest) return
      if (!entry.loaded || this.inUse.has(id)) continue
      this.kept.delete(id)
      this.observer?.evicted()
      void entry.model.then((model) => release(id, model))
    }
  }
}

/** Call an evicted model's `release()` (onnxruntime's sessions) or else `dispose()`; a throw or a hang is logged. */
async function release(modelId: string, model: unknown): Promise<void> {
  if (model === null || (typeof model !== 'object' && typeof model !== 'function')) return
  const holder = model as { release?: unknown; dispose?: unknown }
  const method = typeof holder.release === 'function' ? holder.release : typeof holder.dispose === 'function' ? holder.dispose : undefined
  if (!method) return
  try {
    await raceTimeout(Promise.resolve(method.call(model)), RELEASE_TIMEOUT_MS)
  } catch (error) {
    log.warn('multiplexed_model_release_failed', { modelId, message: error instanceof Error ? error.message : String(error) })
  }
}
