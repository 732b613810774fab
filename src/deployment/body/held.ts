/**
 * Held bodies. A `batching` deployment's requests are read whole before they
 * join a batch (the replica calls holdBody()): its handler reads the bodies
 * of the whole batch together, so a client that sends its body slowly would
 * otherwise hold up every request batched with it. A held request answers
 * every later read from memory, as often as it is made, and remembers which
 * reads failed, so that a batch whose handler failed on one body fails that
 * request alone (unreadableBodies()).
 */
import { FailedItemsError, HTTPError } from '../../errors.js'
import { parseJsonBody } from './json.js'
import { readWhole } from './read-whole.js'

/** Replaced characters for bytes that are not UTF-8, as `Request.text()` does. */
const utf8Lenient = new TextDecoder('utf-8')

/** A held request's body, and how the reads made of it ended. */
export class HeldBody {
  /** The latest read, settled either way: what unreadableBodies() waits for. */
  lastRead: Promise<void> | undefined = undefined
  /** Why a read could not be made as asked (not JSON, another content type, past a limit). */
  failure: Error | undefined = undefined
  /** `request.body`: made on first use, then the same stream each time, as the platform gives. */
  private stream: ReadableStream<Uint8Array> | undefined = undefined

  constructor(readonly bytes: Uint8Array) {}

  /** A fresh copy each read, as the platform gives: a caller that writes into it cannot change the next read. */
  copy(): Uint8Array<ArrayBuffer> {
    return new Uint8Array(this.bytes)
  }

  text(): string {
    return utf8Lenient.decode(this.bytes)
  }

  /** The one `request.json()` that answers 400 for a body that is not JSON, noting the failure. */
  json(): Promise<unknown> {
    return this.watch(Promise.resolve(this.text()).then(parseJsonBody))
  }

  body(): ReadableStream<Uint8Array> {
    if (this.stream === undefined) {
      const bytes = this.copy()
      this.stream = new ReadableStream<Uint8Array>({
        start(controller) {
          if (bytes.byteLength > 0) controller.enqueue(bytes)
          controller.close()
        },
      })
    }
    return this.stream
  }

  /** Note how `read` ends, for unreadableBodies(); `read` itself is returned as it is. */
  watch<T>(read: Promise<T>): Promise<T> {
    this.lastRead = read.then(
      () => undefined,
      (error: unknown) => {
        if (error instanceof Error) this.failure = error
      },
    )
    return read
  }
}

const heldBodies = new WeakMap<Request, HeldBody>()

/** The held body of `request`, or undefined when holdBody() did not read it. */
export function heldBodyOf(request: Request): HeldBody | undefined {
  return heldBodies.get(request)
}

/**
 * Read the request's whole body now, up to `limit` bytes (413 past it, as
 * readBody()), and answer every later read of it from memory: `json()`,
 * `text()`, `arrayBuffer()`, `bytes()`, `blob()`, `formData()`, `body` and
 * `clone()`, and readBody() and readJson(). The request stays the same
 * object (its class, signal, headers and identity); `bodyUsed` is true, as
 * the platform's own, since the body was read.
 */
export async function holdBody(request: Request, limit: number): Promise<void> {
  if (request.method === 'GET' || request.method === 'HEAD' || heldBodies.has(request)) return
  holdBytes(request, await readWhole(request, limit))
}

/**
 * Answer every read of the request's body from `bytes`, as holdBody() does
 * once it has read them: for a request whose body arrived as bytes (carried
 * to a Durable Object in a gathered call), so that it is not read again.
 */
export function holdBytes(request: Request, bytes: Uint8Array): void {
  heldBodies.set(request, new HeldBody(bytes))
  // The same object answers from memory: the held methods go on a prototype in front of its class's own.
  // perf: mlp_batched_vs_hono_json_c64, whose requests are all held. Defining the eight as own properties of each
  // request (no closures, one shared descriptor map) cost 4 to 7 µs a request in a Node 26 micro-benchmark, the
  // swap under 1 µs; the route's server thread spends about 60 µs a request (16.6k req/s in the last full run),
  // so own properties would take 7 to 10% off the row. Not measured as a served A/B: this machine's noise
  // under load (rounds of 0.72 to 1.48) hides a difference that size.
  Object.setPrototypeOf(request, heldPrototypeOf(Object.getPrototypeOf(request) as object))
}

/**
 * Whether a batch's handler failed because a body could not be read as it
 * asked (`request.json()` of a body that is not JSON, readJson() of another
 * content type): then a FailedItemsError that fails each such request with
 * its own error (a 400, 413 or 415), so that the queue runs the others
 * again without them, as it does for a malformed item. A handler that reads
 * its batch with `Promise.all` throws the first failure only, so the reads
 * still under way are awaited first and every failed one is named.
 * Undefined when `thrown` is no such read's error.
 */
export async function unreadableBodies(requests: readonly Request[], thrown: unknown): Promise<FailedItemsError | undefined> {
  const bodies = requests.map(heldBodyOf)
  // Each began before the handler threw: awaiting them in turn takes as long as awaiting them together.
  const reads = bodies.map((body) => body?.lastRead)
  for (const read of reads) await read
  const failed: [number, Error][] = []
  bodies.forEach((body, index) => {
    if (body?.failure !== undefined) failed.push([index, body.failure])
  })
  return failed.some(([, error]) => error === thrown) ? new FailedItemsError(failed) : undefined
}

/**
 * The body methods of a held request, answered from its HeldBody. They sit
 * on a prototype put in front of the request's own, one per request class
 * (Node's adaptor gives a Request class of its own), made on first use.
 */
const heldPrototypes = new WeakMap<object, object>()

function heldPrototypeOf(prototype: object): object {
  let heldPrototype = heldPrototypes.get(prototype)
  if (heldPrototype === undefined) heldPrototypes.set(prototype, (heldPrototype = Object.create(prototype, HELD_REQUEST) as object))
  return heldPrototype
}

/** Only a held request has the held prototype, so its body is there. */
const held = (request: Request): HeldBody => heldBodies.get(request)!

const HELD_REQUEST: PropertyDescriptorMap = {
  arrayBuffer: method(function (this: Request) {
    return Promise.resolve(held(this).copy().buffer)
  }),
  bytes: method(function (this: Request) {
    return Promise.resolve(held(this).copy())
  }),
  text: method(function (this: Request) {
    return Promise.resolve(held(this).text())
  }),
  json: method(function (this: Request) {
    return held(this).json()
  }),
  blob: method(function (this: Request) {
    return Promise.resolve(new Blob([held(this).copy()], { type: this.headers.get('content-type') ?? '' }))
  }),
  formData: method(function (this: Request) {
    return held(this).watch(new Response(held(this).copy(), { headers: this.headers }).formData().catch(notAForm))
  }),
  body: {
    configurable: true,
    get(this: Request) {
      return held(this).body()
    },
  },
  clone: method(function (this: Request) {
    return new Request(this.url, { method: this.method, headers: this.headers, body: held(this).copy(), signal: this.signal })
  }),
}

function method(value: (this: Request) => unknown): PropertyDescriptor {
  return { value, writable: true, configurable: true }
}

/** A form the platform cannot parse is the client's mistake, as a body that is not JSON is. */
function notAForm(error: unknown): never {
  throw new HTTPError(400, `the request body is not a form: ${error instanceof Error ? error.message : String(error)}`)
}
