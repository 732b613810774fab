/**
 * readBody() and readJson(): a request's body read within a limit, for a
 * deployment's `fetch`. What they add to `request.arrayBuffer()` and
 * `request.json()`: a body past the limit is refused with 413 before it is
 * read whole, a JSON body of another content type with 415, and one that is
 * not UTF-8 or not JSON with 400; and a body can be read again.
 */
import { formatReceived } from '../../batching/options.js'
import { heldBodyOf } from './held.js'
import { checkJsonContentType, jsonFromBytes } from './json.js'
import { readWhole, tooLarge } from './read-whole.js'

/** Default limit for request bodies read through these helpers: 1 MiB. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024

/**
 * Read a request body up to `limit` bytes. What it adds to
 * `request.arrayBuffer()`: a body past the limit is refused with 413 before
 * it is read whole (at once for a declared Content-Length, at the limit for
 * a chunked one), so one request cannot make the server hold an upload of
 * any size.
 */
export function readBody(request: Request, limit = DEFAULT_BODY_LIMIT): Promise<Uint8Array> {
  return watchedIfHeld(request, bytesWithin('readBody', request, limit))
}

/**
 * Read and parse a JSON body. What it adds to `request.json()`: 413 past
 * `limit` before the body is read whole, 415 for another content type or a
 * charset other than UTF-8, and 400 for a body that is not UTF-8.
 */
export function readJson(request: Request, limit = DEFAULT_BODY_LIMIT): Promise<unknown> {
  return watchedIfHeld(request, jsonWithin(request, limit))
}

async function jsonWithin(request: Request, limit: number): Promise<unknown> {
  checkLimit('readJson', limit)
  checkJsonContentType(request)
  return jsonFromBytes(await bytesOf(request, limit))
}

async function bytesWithin(caller: string, request: Request, limit: number): Promise<Uint8Array> {
  checkLimit(caller, limit)
  return bytesOf(request, limit)
}

/** A limit is the server's own setting: a wrong one is a bug of the app (a 500), never the client's fault. */
function checkLimit(caller: string, limit: unknown): void {
  if (typeof limit !== 'number' || !(limit >= 0)) {
    throw new TypeError(`${caller}()'s limit must be a number of bytes, 0 or more (Infinity for none), received ${formatReceived(limit)}`)
  }
}

/**
 * Bodies read here, by request: a body can be consumed once, and a batch
 * handler re-run on the requests that did not fail (see FailedItemsError)
 * reads them again.
 */
const bodiesRead = new WeakMap<Request, Uint8Array>()

/** The body read now, or as read before: by holdBody(), or by an earlier readBody() or readJson(). */
async function bytesOf(request: Request, limit: number): Promise<Uint8Array> {
  const before = heldBodyOf(request)?.bytes ?? bodiesRead.get(request)
  if (before !== undefined) {
    if (before.byteLength > limit) throw tooLarge(limit)
    return before
  }
  const body = await readWhole(request, limit)
  bodiesRead.set(request, body)
  return body
}

/** A held request's reads are noted, so that a batch that failed on one body fails that request alone (unreadableBodies()). */
function watchedIfHeld<T>(request: Request, read: Promise<T>): Promise<T> {
  const held = heldBodyOf(request)
  return held === undefined ? read : held.watch(read)
}
