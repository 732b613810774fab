import { ReplicaOverloadedError } from '../errors.js'
import type { CancelSignal } from '../batching/cancel-signal.js'
import type { Router } from './router.js'

/**
 * Send one request or handle call to the replica the router picks, and give
 * the replica back. A replica that says it is overloaded (a Durable Object
 * past its limit) is avoided for a moment; when it refused the request before
 * running it and the request can be sent again (`resendable()`: it has no
 * body that the first attempt took), the request goes once to another replica
 * with room. Otherwise, or with no other replica, the overload is the answer: a
 * 503 with Retry-After.
 */
export async function sendRouted<R>(
  router: Router,
  scope: { readonly signal?: CancelSignal | undefined; readonly multiplexedModelId?: string | undefined },
  resendable: () => boolean,
  send: (replica: number) => Promise<R>,
): Promise<R> {
  const { signal, multiplexedModelId } = scope
  let replica = router.tryAcquire(multiplexedModelId)
  if (replica < 0) replica = await router.acquire(signal, multiplexedModelId)
  let overloaded: ReplicaOverloadedError
  try {
    return await send(replica)
  } catch (error) {
    if (!(error instanceof ReplicaOverloadedError)) throw error
    router.avoid(replica)
    overloaded = error
  } finally {
    router.release(replica)
  }
  if (!overloaded.refused || !resendable()) throw overloaded
  // Only a replica with room now: waiting in the queue for one is not worth it after an overload.
  const other = router.tryAcquire(multiplexedModelId)
  if (other < 0) throw overloaded
  try {
    // With every other replica full the router may hand back the same one; it is not asked twice.
    if (other === replica) throw overloaded
    return await send(other)
  } catch (error) {
    if (error instanceof ReplicaOverloadedError && other !== replica) router.avoid(other)
    throw error
  } finally {
    router.release(other)
  }
}
