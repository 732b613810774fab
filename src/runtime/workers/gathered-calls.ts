import type { CancelSignal } from '../../batching/cancel-signal.js'
import { withResolvers } from '../../batching/resolvers.js'
import { cancellation } from '../../errors.js'

/** The most items one call carries. */
export const MAX_ITEMS_PER_CALL = 128
/** The most body and argument bytes one call carries; an item past it starts the next call. */
export const MAX_BYTES_PER_CALL = 4 * 1024 * 1024
/** The longest a call waits for more items while they keep joining it, from its first. */
export const MAX_GATHER_MS = 2

/** The longest delay setTimeout takes (2^31 - 1 ms, about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1

/** How a gathered call goes out, and what keeps it going when the request that sends it ends. */
export interface GatheredCallsTransport<Item, Answer> {
  /** One call carrying `items`, answered with one answer per item, in order. */
  send(items: Item[]): Promise<Answer[]>
  /** Tell the items' object that these items' callers left after their call went (their items leave its queue). */
  drop(items: Item[]): Promise<void>
  /**
   * Keep the running request alive until `work` settles, even once it has
   * answered or its client has gone (workerd's `waitUntil`): a call carries
   * other requests' items, and a client that leaves must not cancel their
   * answers.
   */
  keepAlive(work: Promise<unknown>): void
}

/** One item waiting in a call, with what settles its caller's promise. */
class Waiting<Item, Answer> {
  /** The caller's own pending timer, cleared once it is answered. */
  readonly alive = setTimeout(() => undefined, MAX_TIMER_MS)
  /** Answered, or its caller left: settled once only. */
  settled = false

  constructor(
    readonly call: Gathering<Item, Answer>,
    readonly item: Item,
    readonly resolve: (answer: Answer) => void,
    readonly reject: (error: Error) => void,
    readonly signal: CancelSignal | undefined,
  ) {}

  /** The caller went away (its client left, or its deadline passed). */
  handleEvent(): void {
    this.call.leave(this, cancellation(this.signal?.reason))
  }

  /** Mark it settled and let its timer and listener go; false if it was settled already. */
  settle(): boolean {
    if (this.settled) return false
    this.settled = true
    clearTimeout(this.alive)
    this.signal?.removeEventListener('abort', this)
    return true
  }
}

/** The items gathered for one call, and whether it went. */
class Gathering<Item, Answer> {
  readonly waiting: Waiting<Item, Answer>[] = []
  /** Items that joined, including those whose callers left since. */
  joined = 0
  readonly startedAt = Date.now()
  bytes = 0
  sent = false
  /** Settles once the call is answered, or went unsent because every caller left. */
  readonly done: Promise<void>
  readonly #done: () => void

  constructor(readonly transport: GatheredCallsTransport<Item, Answer>) {
    const { promise, resolve } = withResolvers<void>()
    this.done = promise
    this.#done = resolve
  }

  leave(waiting: Waiting<Item, Answer>, reason: Error): void {
    if (!waiting.settle()) return // answered already
    waiting.reject(reason)
    // Sent already: its object still holds the item, and is told to let it go.
    if (this.sent) this.transport.keepAlive(this.transport.drop([waiting.item]).catch(() => undefined))
  }

  async send(): Promise<void> {
    this.sent = true
    // Those whose callers left before it went are not sent.
    const waiting = this.waiting.filter((each) => !each.settled)
    try {
      if (waiting.length === 0) return
      const answers = await this.transport.send(waiting.map((each) => each.item))
      for (let i = 0; i < waiting.length; i++) if (waiting[i]!.settle()) waiting[i]!.resolve(answers[i]!)
    } catch (error) {
      const reason = error instanceof Error ? error : new Error(String(error))
      for (const each of waiting) if (each.settle()) each.reject(reason)
    } finally {
      this.#done()
    }
  }
}

/**
 * The calls one Worker isolate makes to one replica's Durable Object,
 * carried together: the second level of batching. The isolate gathers, the
 * object batches.
 *
 * The first item of an idle moment starts a call, which goes on the first
 * turn of the event loop in which no other item joined it (MAX_GATHER_MS
 * at most); the items that arrive meanwhile join it, up to
 * MAX_ITEMS_PER_CALL items and MAX_BYTES_PER_CALL bytes (a full call goes at
 * once). So one hop into the object, and one billed object request, serves
 * every request the isolate took in that moment, where each used to pay its
 * own; at low load a call carries one item, as before, a turn later.
 *
 * Three things workerd asks of a request that waits on a call another
 * request sends, each found by trial:
 * - its promise comes from `Promise.withResolvers()`. A promise made with
 *   `new Promise(executor)` in code V8 has optimized is resolved in the
 *   request that resolves it, not the one that awaits it, and its
 *   continuation then fails ("Cannot perform I/O on behalf of a different
 *   request"): a plain Worker doing this failed most requests after a few
 *   seconds of load, and not one with `withResolvers()` over 25 s;
 * - it keeps a timer of its own pending meanwhile, or workerd cancels it as
 *   hung;
 * - the sending request keeps the call alive past its own end (keepAlive),
 *   so that its client leaving loses no other request's answer.
 */
export class GatheredCalls<Item, Answer> {
  #forming: Gathering<Item, Answer> | undefined = undefined

  constructor(private readonly transport: GatheredCallsTransport<Item, Answer>) {}

  /**
   * Carry `item` (of about `bytes` bytes) in the call being gathered; the
   * answer is its own. A caller whose `signal` aborts is answered at once
   * with the reason, and its item leaves the call (or, once the call went,
   * the object's queue).
   */
  carry(item: Item, bytes: number, signal?: CancelSignal): Promise<Answer> {
    if (signal?.aborted) return Promise.reject(cancellation(signal.reason))
    let call = this.#forming
    if (call === undefined || call.bytes + bytes > MAX_BYTES_PER_CALL) call = this.#start()
    const { promise, resolve, reject } = withResolvers<Answer>()
    const waiting = new Waiting(call, item, resolve, reject, signal)
    call.waiting.push(waiting)
    call.joined++
    call.bytes += bytes
    signal?.addEventListener('abort', waiting, { once: true })
    if (call.waiting.length >= MAX_ITEMS_PER_CALL) this.#send(call)
    else if (call.joined === 1) this.#sendWhenQuiet(call)
    return promise
  }

  #start(): Gathering<Item, Answer> {
    if (this.#forming) this.#send(this.#forming)
    const call = (this.#forming = new Gathering(this.transport))
    // The request that started the call keeps its timers alive until the call is answered, should it end first.
    this.transport.keepAlive(call.done)
    return call
  }

  /**
   * Send `call` on the first turn of the event loop in which no item joined
   * it, or MAX_GATHER_MS after its first item. Not simply on the next turn:
   * requests that arrived together become items one turn apart, each once
   * its body is read, and a call sent on the next turn then carried one.
   */
  #sendWhenQuiet(call: Gathering<Item, Answer>): void {
    const joined = call.joined
    setTimeout(() => {
      if (call.joined !== joined && Date.now() - call.startedAt < MAX_GATHER_MS) this.#sendWhenQuiet(call)
      else this.#send(call)
    }, 0)
  }

  /** Send `call` from the request running now, unless it went already. */
  #send(call: Gathering<Item, Answer>): void {
    if (call.sent) return
    if (this.#forming === call) this.#forming = undefined
    this.transport.keepAlive(call.send())
  }
}
