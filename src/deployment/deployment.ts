import { getValidDeploymentOptions, type DeploymentOptions, type ResolvedDeploymentOptions } from './options.js'

/** What a replica knows about itself: see `replicaContext()`. */
export interface ReplicaContext<Env = unknown> {
  /** The deployment's name. */
  deployment: string
  /** This replica's index, 0 .. numReplicas - 1 (autoscaled: 0 .. maxReplicas - 1). */
  replica: number
  /** Workers: the Worker's `env` (bindings, secrets). Node: what `serve({ env })` was given. */
  env: Env
}

let constructing: ReplicaContext | undefined

/**
 * The replica being constructed: call it in the constructor or a field
 * initializer (`env = replicaContext<Env>().env`). Constructor arguments stay
 * the user's own (from `.bind()`); the runtime's facts come from here.
 */
export function replicaContext<Env = unknown>(): ReplicaContext<Env> {
  if (!constructing) {
    throw new Error('replicaContext() is only available while a replica is being constructed; keep what you need in a field')
  }
  return constructing as ReplicaContext<Env>
}

/** Construct a replica's instance with its context in reach. */
export function constructReplica(deployment: Deployment, context: ReplicaContext): object {
  // DeploymentClass is typed `abstract new` so that any class type-checks in deployment(); the
  // one place edgeserve constructs it needs it concrete, with the arguments .bind() gave.
  const Class = deployment.cls as unknown as new (...args: unknown[]) => object
  const outer = constructing
  constructing = context
  try {
    return new Class(...deployment.args)
  } finally {
    constructing = outer
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type DeploymentClass = abstract new (...args: any[]) => object

/** Constructor arguments that `.bind()` takes. */
export type BindArgs<C extends DeploymentClass> = ConstructorParameters<C>

export interface Deployment<C extends DeploymentClass = DeploymentClass> {
  readonly name: string
  readonly options: ResolvedDeploymentOptions
  readonly cls: C
  /** Constructor arguments given by `.bind()`. */
  readonly args: readonly unknown[]
  /** Ray's `.bind()`: a copy of this deployment whose replicas get these constructor arguments. */
  bind(...args: BindArgs<C>): Deployment<C>
  /** Ray's `.options()`: a copy with some options changed. */
  withOptions(options: DeploymentOptions): Deployment<C>
}

export type InstanceOf<D> = D extends Deployment<infer C> ? InstanceType<C> : never

/**
 * Declare a deployment: a class whose instances (replicas) serve requests.
 *
 * ```ts
 * const adder = deployment(BatchAdder, { numReplicas: 2 })
 * app.get('/adder', ingress(adder))
 * ```
 */
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
    withOptions: (changes: DeploymentOptions) =>
      make(cls, getValidDeploymentOptions({ ...fromResolved(options, changes), ...changes }, cls.name), args),
  }) as Deployment<C>
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

export function isDeployment(value: unknown): value is Deployment {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Deployment).cls === 'function' &&
    typeof (value as Deployment).bind === 'function' &&
    typeof (value as Deployment).options === 'object'
  )
}
