/**
 * edgeserve: dynamic request batching for edge runtimes.
 *
 * This entry holds what every runtime shares: batching, deployments, the
 * Hono ingress and handles. Runtime adapters are `edgeserve/node` and
 * `edgeserve/workers`; inference is `edgeserve/onnx`.
 */
export * from './batching/index.js'
export * from './errors.js'
export {
  deployment,
  replicaContext,
  type Deployment,
  type DeploymentClass,
  type DeploymentOptionsArgs,
  type InstanceOf,
  type ReplicaContext,
} from './deployment/deployment.js'
export type {
  AutoscalingConfig,
  BatchedFetchOptions,
  BatchingConfig,
  DeploymentOptions,
  ResolvedAutoscalingConfig,
  ResolvedDeploymentOptions,
  UnbatchedFetchOptions,
} from './deployment/options.js'
export type { RequestContext } from './batching/context.js'
export { DeploymentResponse, getHandle, type DeploymentHandle, type HandleCallOptions, type HandleOptions } from './deployment/handle.js'
export { multiplexed, multiplexedModelId, type MultiplexedFunction, type MultiplexedOptions } from './deployment/multiplexed.js'
export { MODEL_ID_HEADER } from './deployment/model-id.js'
export { ingress, type IngressHandler } from './http/ingress.js'
export { readBody, readJson, DEFAULT_BODY_LIMIT } from './deployment/body/read.js'
export { toResponse } from './deployment/replica.js'
