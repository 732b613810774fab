import type { CancelSignal } from '../batching/cancel-signal.js'
import { RequestCancelledError, RequestTimeoutError } from '../errors.js'

/**
 * Settle with `work`, or fail when the deadline passes or the signal aborts,
 * whichever comes first. This is what turns a hung handler into a 504 rather
 * than a request that never answers; the work itself is left to finish (or
 * to notice its own cancelled signal) in the background.
 */
export function withDeadline<R>(work: Promise<R>, deadline: number | undefined, signal?: CancelSignal): Promise<R> {
  if (deadline === undefined && !signal) return work
  return new Promise<R>((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined
    const onAbort = () => {
      cleanup()
      reject(new RequestCancelledError('the request was cancelled', { cause: signal?.reason }))
    }
    const cleanup = () => {
      if (timer !== undefined) clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
    }
    if (deadline !== undefined) {
      timer = setTimeout(
        () => {
          cleanup()
          reject(new RequestTimeoutError())
        },
        Math.max(0, deadline - Date.now()),
      )
    }
    if (signal?.aborted) return onAbort()
    signal?.addEventListener('abort', onAbort, { once: true })
    work.then(
      (value) => {
        cleanup()
        resolve(value)
      },
      (error: unknown) => {
        cleanup()
        reject(error)
      },
    )
  })
}
