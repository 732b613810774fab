import { ReplicaOverloadedError } from '../errors.js'
import type { Router } from './router.js'

/**
 * What follows when `replica` answers that it is overloaded (a Durable
 * Object past its limit): it gets no new requests for a moment, and a
 * request it refused before running goes once to another replica with room,
 * if it can be sent again (`resendable`: it has no body that the first
 * attempt took). Otherwise, or with no other replica, the overload is the
 * answer: a 503 with Retry-After. The caller still holds `replica` and
 * gives it back as it would after any answer.
 */
export async function afterOverload<R>(
  router: Router,
  replica: number,
  overloaded: ReplicaOverloadedError,
  resendable: boolean,
  multiplexedModelId: string | undefined,
  send: (replica: number) => Promise<R>,
): Promise<R> {
  router.avoid(replica)
  if (!overloaded.refused || !resendable) throw overloaded
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
