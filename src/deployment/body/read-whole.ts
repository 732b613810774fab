/**
 * Reading a request's body whole, once, within a limit: what readBody(),
 * readJson() and holdBody() do with a body nobody has read yet.
 */
import { HTTPError, RequestCancelledError } from '../../errors.js'

/**
 * The body's bytes, refused with 413 past `limit` before it is read whole:
 * at once for a declared Content-Length, at the limit for a chunked one, so
 * one request cannot make the server hold an upload of any size.
 */
export async function readWhole(request: Request, limit: number): Promise<Uint8Array> {
  const declared = request.headers.get('content-length')
  if (declared !== null) {
    if (Number(declared) > limit) throw tooLarge(limit)
    // The HTTP parser holds a body to its declared length: read whole, the runtime's fastest way.
    const body = new Uint8Array(await arrayBufferOf(request))
    if (body.byteLength > limit) throw tooLarge(limit)
    return body
  }
  if (!request.body) return new Uint8Array(0)
  return readStream(request.body, limit)
}

export function tooLarge(limit: number): HTTPError {
  return new HTTPError(413, `the request body is larger than the limit of ${limit} bytes`)
}

async function arrayBufferOf(request: Request): Promise<ArrayBuffer> {
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
