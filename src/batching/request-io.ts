/**
 * On Cloudflare Workers, which request's I/O the running code belongs to.
 *
 * workerd ties every timer and I/O object to the request whose code made it,
 * and drops them when that request ends; all the requests of one Durable
 * Object share the object's. A batched function that gathered the calls of
 * two Worker requests would run their batch on the timers of whichever
 * request's code started it. If that request ended first, the batch would
 * never finish: the other request would be cancelled as hung, and the queue
 * would wait for its batch for good. So a busy queue keeps a token of its
 * calls' I/O and refuses a call whose code cannot touch it (see BatchQueue).
 *
 * The token is one end of a WebSocketPair that is never used: reading its
 * `readyState` from another request's code throws ("Cannot perform I/O on
 * behalf of a different request"), and costs nothing otherwise. Node and
 * browsers have no WebSocketPair, and no such rule: there is no token.
 */
export interface IoToken {
  readonly readyState: number
}

type WebSocketPairClass = new () => { 0: IoToken; 1: IoToken }

const WebSocketPair = (globalThis as { WebSocketPair?: WebSocketPairClass }).WebSocketPair

/** A token of the I/O of the code running now; undefined where I/O is not tied to requests. */
export function currentIoToken(): IoToken | undefined {
  return WebSocketPair === undefined ? undefined : new WebSocketPair()[0]
}

/** Whether the code running now may use the I/O that `token` was made with. */
export function sharesIo(token: IoToken): boolean {
  try {
    void token.readyState
    return true
  } catch {
    return false
  }
}
