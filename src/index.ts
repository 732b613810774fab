/**
 * edgeserve: dynamic request batching for edge runtimes.
 *
 * This entry holds what every runtime shares: batching, deployments, the
 * Hono ingress and handles. Runtime adapters are `edgeserve/node` and
 * `edgeserve/workers`; inference is `edgeserve/onnx`.
 */
// Each name by hand: what users import, and the types they name it with. Internal code imports a
// helper from its own file, never from here; test/unit/public-api.test.ts records this list.
export {
  batch,
  batchedMethodsOf,
  currentContext,
  endOfStream,
  runWithContext,
  type AdaptiveOptions,
  type AmbientContext,
  type BatchControls,
  type BatchedFunction,
  type BatchHandler,
  type BatchInfo,
  type BatchMethodDecorator,
  type BatchOptions,
  type BatchStats,
  type CallContext,
  type CallOptions,
  type CancelSignal,
  type ContinuousStep,
  type CostPoint,
  type EndOfStream,
  type OnBatchError,
  type QueueObserver,
  type ResolvedAdaptive,
  type ResolvedBatchOptions,
  type StreamBatchHandler,
  type StreamingBatchedFunction,
  type StreamStep,
} from './batching/index.js'
export {
  BackPressureError,
  BatchHandlerError,
  EdgeServeError,
  errorJson,
  errorResponse,
  FailedItemsError,
  HTTPError,
  ItemTooLargeError,
  ReplicaOverloadedError,
  ReplicaUnavailableError,
  RequestCancelledError,
  RequestTimeoutError,
  type ErrorJson,
} from './errors.js'
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
