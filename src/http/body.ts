import { formatReceived } from '../batching/options.js'
import { HTTPError } from '../errors.js'

/** Default limit for request bodies read through these helpers: 1 MiB. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024

/** What a `DirectBody` answers for a body that passed the limit: it stopped reading there. */
export const BODY_TOO_LARGE: unique symbol = Symbol('edgeserve.bodyTooLarge')

/**
 * A request's body read straight from where the runtime keeps it. On Node,
 * `request.body` makes @hono/node-server build an undici Request, a web
 * stream over the socket and an AbortSignal, which costs a POST request
 * more than the rest of edgeserve's path does; the server reads the
 * socket's stream instead. `read` answers undefined when the body is no
 * longer its to read (something began reading `request.body`), and the
 * web stream is used then.
 */
export interface DirectBody {
  /** The body, at once where all of it has arrived, else when it has. */
  read(limit: number): BodyBytes | Promise<BodyBytes> | undefined
  /**
   * A request header (`name` in lower case) as the runtime parsed it, or
   * null. On Node, `request.headers` builds a web Headers object from every
   * header of the request; the one asked for is a property away.
   */
  header?(name: string): string | null
}

/** A body read up to a limit: its bytes, or `BODY_TOO_LARGE`. */
export type BodyBytes = Uint8Array | typeof BODY_TOO_LARGE

const directBodies = new WeakMap<Request, DirectBody>()

/** For a runtime: read `request`'s body through `body` in `readBody()` and `readJson()`. */
export function offerDirectBody(request: Request, body: DirectBody): void {
  directBodies.set(request, body)
}

/**
 * The body of a request whose runtime offered it directly, up to `limit`
 * bytes (`BODY_TOO_LARGE` past it); undefined if none was offered or it is
 * no longer available, and the caller reads `request.body`.
 */
export function readDirectBody(request: Request, limit: number): BodyBytes | Promise<BodyBytes> | undefined {
  const direct = directBodies.get(request)
  if (direct === undefined) return undefined
  directBodies.delete(request)
  return direct.read(limit)
}

/** Request header `name` (lower case), from the runtime's own parse where it offered the body directly. */
function headerOf(request: Request, name: string): string | null {
  const direct = directBodies.get(request)
  return direct?.header !== undefined ? direct.header(name) : request.headers.get(name)
}

/** A limit is the server's own setting: a wrong one is a bug of the app (a 500), never the client's fault. */
function checkLimit(caller: string, limit: unknown): void {
  if (typeof limit !== 'number' || !(limit >= 0)) {
    throw new TypeError(`${caller}()'s limit must be a number of bytes, 0 or more (Infinity for none), received ${formatReceived(limit)}`)
  }
}

/**
 * Read a request body, refusing it with 413 as soon as it passes `limit`
 * bytes: a declared Content-Length over the limit is refused before a byte
 * is read, and a streamed body is cut off at the limit, never held whole.
 */
export async function readBody(request: Request, limit = DEFAULT_BODY_LIMIT): Promise<Uint8Array> {
  checkLimit('readBody', limit)
  const declared = headerOf(request, 'content-length')
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit)
  const direct = readDirectBody(request, limit)
  if (direct !== undefined) {
    const body = await direct
    if (body === BODY_TOO_LARGE) throw tooLarge(limit)
    return body
  }
  if (!request.body) return new Uint8Array(0)
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let total = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    total += value.byteLength
    if (total > limit) {
      await reader.cancel().catch(() => undefined)
      throw tooLarge(limit)
    }
    chunks.push(value)
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

/** Shared: a decode without `stream` starts afresh, even after one that threw. */
const utf8 = new TextDecoder('utf-8', { fatal: true })

/** Read and parse a JSON body, with 413 past the limit and 400 for anything that is not JSON. */
export async function readJson(request: Request, limit = DEFAULT_BODY_LIMIT): Promise<unknown> {
  checkLimit('readJson', limit)
  const type = headerOf(request, 'content-type')
  if (type !== null && !/^application\/(.+\+)?json\s*(;|$)/i.test(type)) {
    throw new HTTPError(415, `expected a JSON body (content-type: application/json), received content-type ${JSON.stringify(type.slice(0, 100))}`)
  }
  const bytes = await readBody(request, limit)
  let text: string
  try {
    text = utf8.decode(bytes)
  } catch {
    throw new HTTPError(400, 'the request body is not valid UTF-8')
  }
  try {
    return JSON.parse(text)
  } catch {
    throw new HTTPError(400, 'the request body is not valid JSON')
  }
}

function tooLarge(limit: number): HTTPError {
  return new HTTPError(413, `the request body is larger than the limit of ${limit} bytes`)
}
