/**
 * What the batching core needs of the runtime it runs on, and nothing more.
 * Each runtime has a module of its own under host/, and package.json's
 * `#batching-host` import chooses one by export condition, so the queue
 * imports no runtime's code itself:
 *
 * - `workerd` (Cloudflare Workers, deployed or under wrangler dev):
 *   host/workerd.ts. It comes before `browser`, since wrangler bundles with
 *   both conditions.
 * - `browser`: host/browser.ts.
 * - any other runtime (Node, and those that follow it): host/node.ts.
 */
export interface BatchingHost {
  /** Where the context of the request whose code is running is kept (see context.ts). */
  contextStorage<S>(): ContextStorage<S>
  /**
   * Whether the clock stands still while code runs. Deployed Workers move it
   * only on I/O (a defence against timing attacks), so no stretch of code
   * can be timed; wrangler dev moves it in whole milliseconds, and counts as
   * standing still so that it behaves as deployed.
   */
  readonly clockStandsStill: boolean
  /**
   * Whether a timer belongs to the request whose code set it, and may be
   * cancelled with that request (Workers): then no queue may count on a
   * callback that some request's code scheduled.
   */
  readonly timersBelongToRequests: boolean
  /**
   * The I/O of the request whose code is running, where the runtime ties I/O
   * to requests (Workers); undefined where it does not.
   */
  currentIo(): RequestIo | undefined
}

/**
 * The part of AsyncLocalStorage this package uses. Typed here rather than as
 * Node's class, so that the declarations a Workers or browser project reads
 * need no Node types.
 */
export interface ContextStorage<S> {
  getStore(): S | undefined
  run<A extends unknown[], R>(store: S, fn: (...args: A) => R, ...args: A): R
}

/**
 * The I/O of one request, where the runtime ties it to requests.
 *
 * workerd ties every timer and I/O object to the request whose code made it,
 * and drops them when that request ends; all the requests of one Durable
 * Object share the object's. A batched function that gathered the calls of
 * two Worker requests would run their batch on the timers of whichever
 * request's code started it. If that request ended first, the batch would
 * never finish: the other request would be cancelled as hung, and the queue
 * would wait for its batch for good. So a busy queue keeps the I/O of its
 * calls, and refuses a call whose code cannot use it.
 */
export interface RequestIo {
  /** Why the code running now may not use this I/O (it is another request's), or undefined if it may. */
  refusal(): Error | undefined
}
