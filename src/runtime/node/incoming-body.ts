/**
 * Request bodies on Node read from the socket's stream (`IncomingMessage`),
 * offered to `readBody()` and to thread replicas in place of `request.body`
 * (see `DirectBody` in http/body.ts for why).
 */
import type { IncomingMessage } from 'node:http'
import { BODY_TOO_LARGE, offerDirectBody, type BodyBytes, type DirectBody } from '../../http/body.js'
import { HTTPError, RequestCancelledError } from '../../errors.js'

/** Offer `request`'s body from `incoming`, unless the method carries none. */
export function offerIncomingBody(request: Request, incoming: IncomingMessage): void {
  const method = incoming.method
  if (method === 'GET' || method === 'HEAD') return
  offerDirectBody(request, new IncomingBody(incoming))
}

class IncomingBody implements DirectBody {
  constructor(private readonly incoming: IncomingMessage) {}

  read(limit: number): BodyBytes | Promise<BodyBytes> | undefined {
    const incoming = this.incoming
    // Someone began reading it as a web stream (request.body, request.json()): theirs now.
    if (incoming.readableDidRead || incoming.readableEnded || incoming.listenerCount('data') > 0) return undefined
    // All of it has arrived (a small body comes in the packet of its headers): it waits in the
    // stream's buffer, to be taken at once rather than through listeners and ticks.
    if (incoming.complete) return takeBuffered(incoming, limit)
    return readIncoming(incoming, limit)
  }

  header(name: string): string | null {
    return incomingHeader(this.incoming, name)
  }
}

/** A header of `incoming` (`name` in lower case) as one string, as `Headers.get()` gives it; null without one. */
export function incomingHeader(incoming: Pick<IncomingMessage, 'headers'>, name: string): string | null {
  const value = incoming.headers[name]
  return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value
}

const EMPTY = new Uint8Array(0)

/** A body that has all arrived, from the stream's buffer; past `limit` it is left there, as readIncoming() leaves the rest. */
function takeBuffered(incoming: IncomingMessage, limit: number): BodyBytes {
  if (incoming.readableLength > limit) return BODY_TOO_LARGE
  // In paused mode, read() without a size returns the whole buffer (null if it is empty), and ends the stream.
  const bytes = incoming.read() as Buffer | null
  return bytes ?? EMPTY
}

/**
 * The whole body of `incoming`, or BODY_TOO_LARGE as soon as it passes
 * `limit`. Past the limit it stops reading and leaves the rest where it is:
 * the server drains it or closes the connection after the answer (see
 * connections.ts), so the next request on a kept-alive connection is safe.
 */
function readIncoming(incoming: IncomingMessage, limit: number): Promise<BodyBytes> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let total = 0
    const stop = () => {
      incoming.off('data', onData)
      incoming.off('end', onEnd)
      incoming.off('close', onClose)
      incoming.off('error', onError)
    }
    const onData = (chunk: Buffer) => {
      total += chunk.length
      if (total > limit) {
        stop()
        incoming.pause()
        resolve(BODY_TOO_LARGE)
        return
      }
      chunks.push(chunk)
    }
    const onEnd = () => {
      stop()
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total))
    }
    const hungUp = () => new RequestCancelledError('the client disconnected before it had sent the whole request body')
    // 'close' before 'end': the client went away mid-body.
    const onClose = () => {
      stop()
      reject(hungUp())
    }
    // Node reports a client gone mid-body as an error too ('aborted', ECONNRESET).
    const onError = (error: Error & { code?: string }) => {
      stop()
      reject(error.code === 'ECONNRESET' ? hungUp() : new HTTPError(400, `the request body could not be read: ${error.message}`))
    }
    incoming.on('data', onData)
    incoming.on('end', onEnd)
    incoming.on('close', onClose)
    incoming.on('error', onError)
  })
}
