import type { IncomingMessage } from 'node:http'

/** A header of `incoming` (`name` in lower case) as one string, as `Headers.get()` gives it; null without one. */
export function incomingHeader(incoming: Pick<IncomingMessage, 'headers'>, name: string): string | null {
  const value = incoming.headers[name]
  return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value
}
