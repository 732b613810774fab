import { formatReceived } from '../batching/options.js'
import type { HandleMarker } from './handle-marker.js'
import {
  getValidDeploymentOptions,
  type BatchedFetchOptions,
  type BatchingConfig,
  type DeploymentOptions,
  type ResolvedDeploymentOptions,
  type UnbatchedFetchOptions,
} from './options.js'

/** What a replica knows about itself: see `replicaContext()`. */
export interface ReplicaContext<Env = unknown> {
  /** The deployment's name. */
  deployment: string
  /** This replica's index, 0 .. numReplicas - 1 (autoscaled: 0 .. maxReplicas - 1). */
  replica: number
  /** Workers: the Worker's `env` (bindings, secrets). Node: what `serve({ env })` was given. */
  env: Env
}

/** The replica being constructed. */
let constructing: { context: ReplicaContext } | undefined

/**
 * The replica being constructed: call it in the constructor or a field
 * initializer (`env = replicaContext<Env>().env`). Constructor arguments stay
 * the user's own (from `.bind()`); the runtime's facts come from here.
 */
export function replicaContext<Env = unknown>(): ReplicaContext<Env> {
  if (!constructing) {
    throw new Error('replicaContext() is only available while a replica is being constructed; keep what you need in a field')
  }
  return constructing.context as ReplicaContext<Env>
}

/**
 * Construct a replica's instance with its context in reach, from `args`
 * (the deployment's bound arguments, with bound deployments already turned
 * into handles).
 */
export function constructReplica(deployment: Deployment, context: ReplicaContext, args: readonly unknown[]): object {
  const outer = constructing
  constructing = { context }
  try {
    // DeploymentClass is typed `abstract new` so that any class type-checks in deployment(), and TypeScript
    // lets no abstract class be built with `new`. Abstract is a compile-time notion: Reflect.construct()
    // builds the class as `new` would, and a class returns an object.
    return Reflect.construct(deployment.cls, args) as object
  } finally {
    constructing = outer
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type DeploymentClass = abstract new (...args: any[]) => object

/**
 * Constructor arguments that `.bind()` takes: the constructor's own, where a
 * parameter typed `DeploymentHandle<X>` also takes a deployment of class X.
 * Ray's model composition: `ingress.bind(detector, recognizer)` hosts the
 * bound deployments with the app, and the constructor receives handles.
 */
export type BindArgs<C extends DeploymentClass> = BindArgList<ConstructorParameters<C>>

/** Mapped over a type parameter, so that a tuple stays a tuple (optional and rest parameters included). */
type BindArgList<P extends readonly unknown[]> = { [K in keyof P]: BindArg<P[K]> }

/** One argument of `.bind()`: the value itself, or for a handle parameter the deployment it calls. */
export type BindArg<T> =
  T extends HandleMarker<infer I>
    ? unknown extends I
      ? T
      : I extends object
        ? // eslint-disable-next-line @typescript-eslint/no-explicit-any
          T | Deployment<abstract new (...args: any[]) => I>
        : T
    : T

export interface Deployment<C extends DeploymentClass = DeploymentClass> {
  readonly name: string
  readonly options: ResolvedDeploymentOptions
  readonly cls: C
  /** Constructor arguments given by `.bind()`. */
  readonly args: readonly unknown[]
  /** Ray's `.bind()`: a copy of this deployment whose replicas get these constructor arguments. */
  bind(...args: BindArgs<C>): Deployment<C>
  /** Ray's `.options()`: a copy with some options changed; one given as undefined goes back to its default. */
  withOptions(options: OptionChanges<C>): Deployment<C>
}

/**
 * What a class's `fetch` takes: one `'request'`, a batch of `'requests'`
 * (`Request[]`), or `'either'` (both, or something else, or the class has no
 * `fetch` and is called through handles only). Ray's `batching_config` is
 * what hands `fetch` a batch, so it is required for the second and refused
 * for the first.
 */
type FetchTakes<C extends DeploymentClass> =
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  InstanceType<C> extends { fetch(input: infer Input, ...rest: any[]): unknown }
    ? Request extends Input
      ? Request[] extends Input
        ? 'either'
        : 'request'
      : Request[] extends Input
        ? 'requests'
        : 'either'
    : 'either'

/**
 * `deployment()`'s options for class C: `batching` (required) for a `fetch`
 * that takes `Request[]`, none for one that takes a `Request`. The options of
 * the first are required, so `deployment(Batched)` without them is an error.
 */
export type DeploymentOptionsArgs<C extends DeploymentClass> = {
  request: [options?: UnbatchedFetchOptions]
  requests: [options: BatchedFetchOptions]
  either: [options?: DeploymentOptions]
}[FetchTakes<C>]

/** What `.withOptions()` may change: `batching` stays as `fetch` needs it. */
type OptionChanges<C extends DeploymentClass> = {
  request: UnbatchedFetchOptions
  requests: Omit<DeploymentOptions, 'batching'> & { batching?: BatchingConfig }
  either: DeploymentOptions
}[FetchTakes<C>]

export type InstanceOf<D> = D extends Deployment<infer C> ? InstanceType<C> : never

/**
 * Declare a deployment: a class whose instances (replicas) serve requests.
 *
 * ```ts
 * const adder = deployment(BatchAdder, { numReplicas: 2 })
 * app.get('/adder', ingress(adder))
 * ```
 */
export function deployment<C extends DeploymentClass>(cls: C, ...options: DeploymentOptionsArgs<C>): Deployment<C>
export function deployment<C extends DeploymentClass>(cls: C, options?: DeploymentOptions): Deployment<C> {
  if (typeof cls !== 'function' || !cls.prototype) {
    throw new TypeError(`deployment() needs a class, received ${cls === null ? 'null' : typeof cls}`)
  }
  return make(cls, getValidDeploymentOptions(options, cls.name), [])
}

function make<C extends DeploymentClass>(cls: C, options: ResolvedDeploymentOptions, args: readonly unknown[]): Deployment<C> {
  return Object.freeze({
    name: options.name,
    options,
    cls,
    args,
    bind: (...bound: unknown[]) => make(cls, options, bound),
    withOptions: (changes: DeploymentOptions) => make(cls, getValidDeploymentOptions({ ...fromResolved(options, changes), ...changes }, cls.name), args),
  })
}

/** The options to start from in `.withOptions(changes)`: changing the count one way drops the other way. */
function fromResolved(options: ResolvedDeploymentOptions, changes: DeploymentOptions): DeploymentOptions {
  const { requestTimeoutS, batching, autoscaling, numReplicas, ...rest } = options
  const countChanged = 'numReplicas' in changes || 'autoscaling' in changes
  return {
    ...rest,
    // An autoscaled deployment's numReplicas is derived from maxReplicas, not given.
    ...(countChanged ? {} : autoscaling ? { autoscaling } : { numReplicas }),
    ...(requestTimeoutS === undefined ? {} : { requestTimeoutS }),
    ...(batching ? { batching } : {}),
  }
}

/**
 * The deployments `deployment` reaches through `.bind()` arguments, and the
 * ones those reach, in order of first appearance (`deployment` itself not
 * included unless bound into itself).
 */
export function boundDeployments(deployment: Deployment): Deployment[] {
  const found: Deployment[] = []
  const visit = (d: Deployment) => {
    for (const arg of d.args) {
      if (isDeployment(arg) && !found.includes(arg)) {
        found.push(arg)
        visit(arg)
      }
    }
  }
  visit(deployment)
  return found
}

export function isDeployment(value: unknown): value is Deployment {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Deployment).cls === 'function' &&
    typeof (value as Deployment).bind === 'function' &&
    typeof (value as Deployment).options === 'object'
  )
}

/**
 * Refuse what is not a deployment where one is needed, naming the call that
 * would work: the usual slip passes the class itself, `ingress(MyClass)`.
 */
export function checkDeployment(value: unknown, fn: string, restOfCall = ''): asserts value is Deployment {
  if (isDeployment(value)) return
  const named = typeof value === 'function' && value.name ? value.name : 'MyClass'
  throw new TypeError(
    `${fn}() needs a deployment made with deployment(Class), received ${formatReceived(value)}: write ${fn}(deployment(${named})${restOfCall})`,
  )
}

/** An option listing deployments (`serve()`'s and `serveWorker()`'s `deployments`): undefined, or an array of them. */
export function checkDeploymentList(value: unknown, option: string): void {
  if (value === undefined || (Array.isArray(value) && value.every(isDeployment))) return
  const slip: unknown = Array.isArray(value) ? value.find((each: unknown) => !isDeployment(each)) : undefined
  const named = typeof slip === 'function' && slip.name ? ` (wrap ${slip.name} as deployment(${slip.name}))` : ''
  throw new TypeError(`${option} must be an array of deployments made with deployment(Class), received ${formatReceived(value)}${named}`)
}
