import { formatReceived } from '../batching/options.js'
import { FailedItemsError, HTTPError, RequestCancelledError } from '../errors.js'

/** Default limit for request bodies read through these helpers: 1 MiB. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024

/** A limit is the server's own setting: a wrong one is a bug of the app (a 500), never the client's fault. */
function checkLimit(caller: string, limit: unknown): void {
  if (typeof limit !== 'number' || !(limit >= 0)) {
    throw new TypeError(`${caller}()'s limit must be a number of bytes, 0 or more (Infinity for none), received ${formatReceived(limit)}`)
  }
}

/**
 * Read a request body up to `limit` bytes. What it adds to
 * `request.arrayBuffer()`: a body past the limit is refused with 413 before
 * it is read whole (at once for a declared Content-Length, at the limit for
 * a chunked one), so one request cannot make the server hold an upload of
 * any size.
 */
export function readBody(request: Request, limit = DEFAULT_BODY_LIMIT): Promise<Uint8Array> {
  const read = readBodyOrRefuse(request, limit)
  return held.has(request) ? watched(request, read) : read
}

async function readBodyOrRefuse(request: Request, limit: number): Promise<Uint8Array> {
  checkLimit('readBody', limit)
  // Read before: a batch re-run without its failed items (FailedItemsError) reads its requests again.
  const read = bodiesRead.get(request)
  if (read !== undefined) {
    if (read.byteLength > limit) throw tooLarge(limit)
    return read
  }
  const body = await readBodyOnce(request, limit)
  bodiesRead.set(request, body)
  return body
}

/**
 * Bodies read whole, by request: a body can be consumed once, and a batch
 * handler re-run on the requests that did not fail (see FailedItemsError)
 * reads them again.
 */
const bodiesRead = new WeakMap<Request, Uint8Array>()
const textsRead = new WeakMap<Request, Promise<string>>()

async function readBodyOnce(request: Request, limit: number): Promise<Uint8Array> {
  const declared = request.headers.get('content-length')
  if (declared !== null) {
    if (Number(declared) > limit) throw tooLarge(limit)
    // The HTTP parser holds a body to its declared length: read whole, the runtime's fastest way.
    const body = new Uint8Array(await whole(request))
    if (body.byteLength > limit) throw tooLarge(limit)
    return body
  }
  if (!request.body) return new Uint8Array(0)
  return readStream(request.body, limit)
}

async function whole(request: Request): Promise<ArrayBuffer> {
  try {
    return await request.arrayBuffer()
  } catch (error) {
    throw bodyReadError(error)
  }
}

/** A body of unknown length, cut off at `limit`. */
async function readStream(stream: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array> {
  const reader = stream.getReader()
  const chunks: Uint8Array[] = []
  let total = 0
  for (;;) {
    let next: ReadableStreamReadResult<Uint8Array>
    try {
      next = await reader.read()
    } catch (error) {
      throw bodyReadError(error)
    }
    if (next.done) break
    total += next.value.byteLength
    if (total > limit) {
      await reader.cancel().catch(() => undefined)
      throw tooLarge(limit)
    }
    chunks.push(next.value)
  }
  if (chunks.length === 1) return chunks[0]!
  const body = new Uint8Array(total)
  let offset = 0
  for (const chunk of chunks) {
    body.set(chunk, offset)
    offset += chunk.byteLength
  }
  return body
}

/**
 * Why a body could not be read: used already (a TypeError, the app's
 * mistake), malformed on the wire (400), or the client went away mid-body.
 */
function bodyReadError(error: unknown): unknown {
  if (error instanceof TypeError) return error
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code === 'string' && code.startsWith('HPE_')) return new HTTPError(400, `the request body could not be read: ${(error as Error).message}`)
  return new RequestCancelledError('the client disconnected before it had sent the whole request body')
}

/** Shared: a decode without `stream` starts afresh, even after one that threw. */
const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * Read and parse a JSON body. What it adds to `request.json()`: 413 past
 * `limit` before the body is read whole, 415 for another content type or a
 * charset other than UTF-8, and 400 for a body that is not UTF-8.
 */
export function readJson(request: Request, limit = DEFAULT_BODY_LIMIT): Promise<unknown> {
  const read = readJsonOrRefuse(request, limit)
  return held.has(request) ? watched(request, read) : read
}

async function readJsonOrRefuse(request: Request, limit: number): Promise<unknown> {
  checkLimit('readJson', limit)
  const type = request.headers.get('content-type')
  if (type !== null && !/^application\/(.+\+)?json\s*(;|$)/i.test(type)) {
    throw new HTTPError(415, `expected a JSON body (content-type: application/json), received content-type ${JSON.stringify(type.slice(0, 100))}`)
  }
  // JSON travels as UTF-8 (RFC 8259): a body that says it is UTF-16 would be read as other text.
  const charset = type === null ? undefined : /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(type)?.[1]
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
    throw new HTTPError(415, `expected a UTF-8 JSON body, received charset ${JSON.stringify(charset.slice(0, 40))}`)
  }
  const bytes = await readBodyOrRefuse(request, limit)
  let text: string
  try {
    text = utf8.decode(bytes)
  } catch {
    throw new HTTPError(400, 'the request body is not valid UTF-8')
  }
  return parseJsonBody(text)
}

/** A request body's text as JSON, or the 400 every runtime answers for one that is not. */
export function parseJsonBody(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    throw new HTTPError(400, 'the request body is not valid JSON')
  }
}

function tooLarge(limit: number): HTTPError {
  return new HTTPError(413, `the request body is larger than the limit of ${limit} bytes`)
}

/**
 * Read the request's whole body now, up to `limit` bytes (413 past it, as
 * readBody()), and answer every later read of it from memory, as often as
 * it is made: `json()`, `text()`, `arrayBuffer()`, `bytes()`, `blob()`,
 * `formData()`, `body` and `clone()`, and readBody() and readJson(). A
 * `batching` deployment's requests are read so before they join a batch:
 * its handler reads the bodies of the whole batch together, so a client
 * that sends its body slowly would hold every request batched with it.
 * The request stays the same object (its signal, headers and identity);
 * `bodyUsed` is true, as the platform's own, since the body was read.
 */
export async function holdBody(request: Request, limit: number): Promise<void> {
  if (request.method === 'GET' || request.method === 'HEAD') return
  bodiesRead.set(request, await readBodyOnce(request, limit))
  // A prototype per request class, made once, in front of the class's own: defining the eight methods on
  // each request instead took about ten times as long (some microseconds a request on Node).
  Object.setPrototypeOf(request, heldPrototypeOf(Object.getPrototypeOf(request) as object))
  held.add(request)
}

/** The prototype a held request gets, by the prototype it had: Node's adaptor gives a request class of its own. */
const heldPrototypes = new WeakMap<object, object>()

function heldPrototypeOf(prototype: object): object {
  let heldPrototype = heldPrototypes.get(prototype)
  if (heldPrototype === undefined) heldPrototypes.set(prototype, (heldPrototype = Object.create(prototype, HELD_BODY) as object))
  return heldPrototype
}

/** Requests whose bodies holdBody() read. */
const held = new WeakSet<Request>()
/** Why a held request's body could not be read as asked (not JSON, another content type, past a limit). */
const readFailures = new WeakMap<Request, Error>()
/** A held request's latest read, settled either way: what unreadableBodies() waits for. */
const readsUnderWay = new WeakMap<Request, Promise<void>>()

/** Note how `read` of a held request ends, for unreadableBodies(). */
function watched<T>(request: Request, read: Promise<T>): Promise<T> {
  const noted = read.then(
    () => undefined,
    (error: unknown) => {
      if (error instanceof Error) readFailures.set(request, error)
    },
  )
  readsUnderWay.set(request, noted)
  return read
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
  await Promise.all(requests.map((request) => readsUnderWay.get(request)))
  const failed: [number, Error][] = []
  requests.forEach((request, index) => {
    const error = readFailures.get(request)
    if (error !== undefined) failed.push([index, error])
  })
  return failed.some(([, error]) => error === thrown) ? new FailedItemsError(failed) : undefined
}

/** The bytes holdBody() read for `request`, kept where readBody() keeps what it read. */
function heldBytes(request: Request): Uint8Array {
  return bodiesRead.get(request)!
}

/** A fresh copy each read, as the platform gives: a caller that writes into it cannot change the next read. */
const copyOf = (request: Request): Uint8Array<ArrayBuffer> => new Uint8Array(heldBytes(request))

/** Replaced characters for bytes that are not UTF-8, as `Request.text()` does. */
const utf8Lenient = new TextDecoder('utf-8')

/** A stream per request, made on first use: `body` gives the same stream each time it is read. */
const heldStreams = new WeakMap<Request, ReadableStream<Uint8Array>>()

const HELD_BODY: PropertyDescriptorMap = {
  arrayBuffer: method(function (this: Request) {
    return Promise.resolve(copyOf(this).buffer)
  }),
  bytes: method(function (this: Request) {
    return Promise.resolve(copyOf(this))
  }),
  text: method(function (this: Request) {
    return Promise.resolve(utf8Lenient.decode(heldBytes(this)))
  }),
  // The one request.json() that answers 400 for a body that is not JSON, reading the held text here.
  json: method(jsonOr400),
  blob: method(function (this: Request) {
    return Promise.resolve(new Blob([copyOf(this)], { type: this.headers.get('content-type') ?? '' }))
  }),
  formData: method(function (this: Request) {
    return watched(this, new Response(copyOf(this), { headers: this.headers }).formData().catch(notAForm))
  }),
  body: {
    configurable: true,
    get(this: Request) {
      let stream = heldStreams.get(this)
      if (stream === undefined) {
        const bytes = copyOf(this)
        stream = new ReadableStream<Uint8Array>({
          start(controller) {
            if (bytes.byteLength > 0) controller.enqueue(bytes)
            controller.close()
          },
        })
        heldStreams.set(this, stream)
      }
      return stream
    },
  },
  clone: method(function (this: Request) {
    return new Request(this.url, { method: this.method, headers: this.headers, body: copyOf(this), signal: this.signal })
  }),
}

/** A form the platform cannot parse is the client's mistake, as a body that is not JSON is. */
function notAForm(error: unknown): never {
  throw new HTTPError(400, `the request body is not a form: ${error instanceof Error ? error.message : String(error)}`)
}

function method(value: (this: Request) => unknown): PropertyDescriptor {
  return { value, writable: true, configurable: true }
}

/**
 * Make `request.json()` refuse a body that is not JSON with a 400 JSON
 * error, the client's mistake, where the platform's own throws a
 * SyntaxError that would answer 500. A runtime calls it on each request
 * with a body before the app sees it. It also lets `request.json()` be
 * called again, as a batch re-run without its failed items does.
 */
export function answerBadJsonWith400(request: Request): void {
  // Defined, not assigned: @hono/node-server's Request has a read-only json.
  Object.defineProperty(request, 'json', JSON_OR_400)
}

const JSON_OR_400: PropertyDescriptor = { value: jsonOr400, writable: true, configurable: true }

function jsonOr400(this: Request): Promise<unknown> {
  // Read once, parsed afresh on each call: a batch re-run (see bodiesRead) calls it again.
  let text = textsRead.get(this)
  if (text === undefined) textsRead.set(this, (text = this.text()))
  const parsed = text.then(parseJsonBody)
  // This own method stands in front of a held request's (holdBody()), so it notes the failure as that one would.
  return held.has(this) ? watched(this, parsed) : parsed
}
