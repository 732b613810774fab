/**
 * The batching core's host on Cloudflare Workers (workerd, deployed or under
 * wrangler dev), chosen by the `workerd` condition of package.json's
 * `#batching-host` import (see host.ts).
 *
 * - AsyncLocalStorage is `node:async_hooks`' under `nodejs_compat`.
 * - Deployed, the clock moves only on I/O; wrangler dev's is treated alike.
 * - A timer, and any I/O object, belongs to the request whose code made it,
 *   and may be cancelled with it.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import type { BatchingHost, RequestIo } from '../host.js'

interface Socket {
  readonly readyState: number
}

// workerd's own global, which Node's and the DOM's types do not declare.
const WebSocketPair = (globalThis as { WebSocketPair?: new () => { 0: Socket; 1: Socket } }).WebSocketPair!

/**
 * The I/O of the request whose code made it, held as one end of a
 * WebSocketPair that is never used: reading its `readyState` from another
 * request's code throws ("Cannot perform I/O on behalf of a different
 * request"), and costs nothing otherwise.
 */
class WorkerRequestIo implements RequestIo {
  private readonly socket = new WebSocketPair()[0]

  refusal(): Error | undefined {
    try {
      void this.socket.readyState
      return undefined
    } catch {
      return new TypeError(
        "this batched function is busy with another request's calls, and on Cloudflare Workers one request's code " +
          "cannot finish another's: batch inside a deployment, whose replicas are Durable Objects " +
          '(edgeserve\'s Workers guide, "A model cheaper than the hop")',
      )
    }
  }
}

export const host: BatchingHost = {
  contextStorage: () => new AsyncLocalStorage(),
  clockStandsStill: true,
  timersBelongToRequests: true,
  currentIo: () => new WorkerRequestIo(),
}
