/** What a request body means as JSON, and the client's mistakes that it is not: 415 and 400. */
import { HTTPError } from '../../errors.js'

/** 415 for a body whose content type is not JSON, or whose charset is not UTF-8; a request with no content type passes. */
export function checkJsonContentType(request: Request): void {
  const type = request.headers.get('content-type')
  if (type === null) return
  if (!/^application\/(.+\+)?json\s*(;|$)/i.test(type)) {
    throw new HTTPError(415, `expected a JSON body (content-type: application/json), received content-type ${JSON.stringify(type.slice(0, 100))}`)
  }
  // JSON travels as UTF-8 (RFC 8259): a body that says it is UTF-16 would be read as other text.
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(type)?.[1]
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
    throw new HTTPError(415, `expected a UTF-8 JSON body, received charset ${JSON.stringify(charset.slice(0, 40))}`)
  }
}

/** Shared: a decode without `stream` starts afresh, even after one that threw. */
const utf8 = new TextDecoder('utf-8', { fatal: true })

/** The body's bytes as JSON: 400 for bytes that are not UTF-8, or text that is not JSON. */
export function jsonFromBytes(bytes: Uint8Array): unknown {
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
