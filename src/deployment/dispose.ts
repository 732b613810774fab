import { log } from '../metrics/log.js'
import { raceTimeout } from './request-scope.js'

/** The longest a replica's `dispose()` may take before it is given up on. */
const DISPOSE_TIMEOUT_MS = 30_000

/**
 * Call a stopped replica's `dispose()`, if its class has one. One name,
 * `dispose`, the word onnxruntime's sessions and most resource holders use;
 * a throw or a hang is logged, never passed on: the replica is gone either way.
 */
export async function disposeInstance(instance: object, deployment: string, replica: number): Promise<void> {
  const dispose = (instance as { dispose?: unknown }).dispose
  if (typeof dispose !== 'function') return
  try {
    await raceTimeout(Promise.resolve(dispose.call(instance)), DISPOSE_TIMEOUT_MS)
  } catch (error) {
    log.warn('replica_dispose_failed', { deployment, replica, message: error instanceof Error ? error.message : String(error) })
  }
}
