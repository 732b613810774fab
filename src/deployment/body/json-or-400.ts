import { heldBodyOf } from './held.js'
import { parseJsonBody } from './json.js'

/**
 * Make `request.json()` refuse a body that is not JSON with a 400 JSON
 * error, the client's mistake, where the platform's own throws a
 * SyntaxError that would answer 500. A runtime calls it on each request
 * with a body before the app sees it. It also lets `request.json()` be
 * called again, as a batch re-run without its failed items does.
 */
export function answerBadJsonWith400(request: Request): void {
  // Defined, not assigned: @hono/node-server's Request has a read-only json.
  Object.defineProperty(request, 'json', { value: jsonOr400, writable: true, configurable: true })
}

/** Texts read by json(), by request: a body can be consumed once, and a batch re-run calls json() again. */
const textsRead = new WeakMap<Request, Promise<string>>()

function jsonOr400(this: Request): Promise<unknown> {
  // This own method stands in front of a held request's json() (holdBody()): answer as that one does.
  const held = heldBodyOf(this)
  if (held !== undefined) return held.json()
  let text = textsRead.get(this)
  if (text === undefined) textsRead.set(this, (text = this.text()))
  return text.then(parseJsonBody)
}
