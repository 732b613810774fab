import { AsyncLocalStorage } from '#async-context'
import { setContextProvider, setContextRunner, type AmbientContext } from '../batching/context.js'
import { LinkedQueue, type Linked } from '../batching/list.js'
import { log } from '../metrics/log.js'

/**
 * The request a replica is serving. The batch queue reads it, so that
 * `await this.handleBatch(x)` inside `fetch()` inherits the client's
 * disconnect signal, the request deadline and the call's origin without the
 * user passing them.
 *
 * How it follows the user's code, cheapest first:
 *
 * - While the user's method runs synchronously (up to its first `await`),
 *   the context is a plain variable. A batched call made there, the common
 *   `return this.handleBatch(parse(request))`, finds it at no cost.
 * - A batched call made after an `await` can name its request: `const call
 *   = currentRequest()` before the first await, then `await
 *   this.classify(body, { request: call })`. Nothing is looked up.
 * - A batched call made after an `await` without it (`const body = await
 *   readBody(r); await this.classify(body)`) finds no variable set. The
 *   first time that happens while a request is in flight, tracking switches
 *   to AsyncLocalStorage for the rest of the process's life, and says so in
 *   the log. On Node 20, AsyncLocalStorage installs promise hooks that slow
 *   every promise in the process (a no-op batched route served half the
 *   requests a second with it; the house-price route served 30% fewer
 *   beside an OCR route that had switched it on), so it is only paid for by
 *   apps that need it. The call that revealed the need gets the context too
 *   when it is the only request in flight.
 */
export interface RequestContext extends AmbientContext {
  /** 'batch': the code of a batch of one multiplexed model's calls, which belongs to no single request. */
  origin: 'http' | 'handle' | 'batch'
}

/** The request whose code runs synchronously right now. */
let running: RequestContext | undefined
/** Created when a batched call is first seen after an await; from then on every request is tracked across awaits. */
let storage: AsyncLocalStorage<RequestContext> | undefined
/**
 * Requests inside user code now. A linked list, not a Set: a Set that sees
 * one add and one delete per request rehashes into a fresh table every few
 * dozen requests, and V8 keeps each outgrown table linked to the next. Once
 * one of them has been promoted to the old generation, that dead chain keeps
 * every later table, and the requests listed in it, alive through minor GCs:
 * a no-op batched route spent a fifth of its time copying them.
 */
class InFlight implements Linked<InFlight> {
  prev: InFlight | undefined = undefined
  next: InFlight | undefined = undefined
  constructor(readonly context: RequestContext) {}
}
const inFlight = new LinkedQueue<InFlight>()

setContextProvider(() => running ?? storage?.getStore() ?? missed())
setContextRunner((context, fn, arg) => {
  const outer = running
  const batchContext: RequestContext = { ...context, origin: 'batch' }
  running = batchContext
  try {
    return storage ? storage.run(batchContext, fn, arg) : fn(arg)
  } finally {
    running = outer
  }
})

function missed(): RequestContext | undefined {
  if (inFlight.count === 0 || storage) return undefined
  storage = new AsyncLocalStorage<RequestContext>()
  log.info('request context follows awaits', {
    why: 'a batched call was made after an await inside a replica method, without { request }',
    cost: 'AsyncLocalStorage from now on: on Node 20 its promise hooks slow every promise in this process',
    fix: "take const call = currentRequest() before the method's first await, and pass this.method(item, { request: call })",
    at: callSite(new Error().stack),
  })
  // With one request in flight, the call can only be that request's.
  return inFlight.count === 1 ? inFlight.head!.context : undefined
}

/** The first frame of a stack that is not edgeserve's own: where the user made the call. */
function callSite(stack: string | undefined): string | undefined {
  const frames = (stack ?? '').split('\n').slice(1)
  return frames.find((frame) => !/[/\\]src[/\\](batching|deployment)[/\\][^/\\]+\.[cm]?[jt]s/.test(frame))?.trim()
}

/**
 * Track every request across awaits from now on. A replica that calls other
 * deployments through handles asks for it when it is constructed: its calls
 * come after awaits, and the lazy switch above would miss the requests
 * already in flight when it first happens.
 */
export function trackAcrossAwaits(): void {
  storage ??= new AsyncLocalStorage<RequestContext>()
}

/** Run the user's method for one request or call with `context` as its ambient context. */
export async function runInContext<R>(context: RequestContext, fn: () => R | Promise<R>): Promise<R> {
  const entry = new InFlight(context)
  inFlight.push(entry)
  const outer = running
  running = context
  let result: R | Promise<R>
  try {
    result = storage ? storage.run(context, fn) : fn()
  } finally {
    running = outer
  }
  try {
    return await result
  } finally {
    inFlight.remove(entry)
  }
}

/**
 * The request being served, inside a replica whose class has batched
 * methods; undefined elsewhere. Taken before a method's first await and
 * passed to a batched call made after it (`this.classify(x, { request })`),
 * it gives that call the request's signal, deadline and origin without
 * AsyncLocalStorage, whose promise hooks slow every promise in a Node 20
 * process once on.
 */
export function currentRequest(): RequestContext | undefined {
  return running ?? storage?.getStore()
}

/** How request context follows user code in this process: see RequestContext. */
export function contextTracking(): 'synchronous' | 'async-local-storage' {
  return storage ? 'async-local-storage' : 'synchronous'
}
