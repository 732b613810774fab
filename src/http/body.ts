import { HTTPError } from '../errors.js'

/** Default limit for request bodies read through these helpers: 1 MiB. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024

/**
 * Read a request body, refusing it with 413 as soon as it passes `limit`
 * bytes: a declared Content-Length over the limit is refused before a byte
 * is read, and a streamed body is cut off at the limit, never held whole.
 */
export async function readBody(request: Request, limit = DEFAULT_BODY_LIMIT): Promise<Uint8Array> {
  const declared = request.headers.get('content-length')
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit)
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

/** Read and parse a JSON body, with 413 past the limit and 400 for anything that is not JSON. */
export async function readJson(request: Request, limit = DEFAULT_BODY_LIMIT): Promise<unknown> {
  const type = request.headers.get('content-type')
  if (type !== null && !/^application\/(.+\+)?json\s*(;|$)/i.test(type)) {
    throw new HTTPError(415, `expected a JSON body (content-type: application/json), received content-type ${JSON.stringify(type.slice(0, 100))}`)
  }
  const bytes = await readBody(request, limit)
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
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
