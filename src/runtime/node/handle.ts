import { callThrough, makeHandle, type DeploymentHandle } from '../../deployment/handle.js'
import { replicaSetOf } from '../../deployment/replica-set.js'
import { DEFAULT_APP, findDeployment } from './registry.js'

/**
 * A handle to a deployment served in this process, found by name (Ray's
 * `serve.get_deployment_handle(name, app_name=...)`). Name the class as the
 * type argument to get typed methods.
 *
 * ```ts
 * const handle = getDeploymentHandle<BatchTextGenerator>('BatchTextGenerator', { app: 'Text-Completion-App' })
 * const text = await handle.generate.remote('Once upon a time')
 * ```
 */
export function getDeploymentHandle<I extends object>(name: string, options: { app?: string | undefined } = {}): DeploymentHandle<I> {
  const { deployment, env } = findDeployment(name, options.app ?? DEFAULT_APP)
  return makeHandle<I>(callThrough(() => replicaSetOf(env, deployment)))
}
