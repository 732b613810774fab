/**
 * Request bodies on Node read from the socket's stream (`IncomingMessage`),
 * offered to `readBody()` and to thread replicas in place of `request.body`
 * (see `DirectBody` in http/body.ts for why).
 */
import type { IncomingMessage } from 'node:http'
import { BODY_TOO_LARGE, offerDirectBody, type DirectBody } from '../../http/body.js'
import { HTTPError, RequestCancelledError } from '../../errors.js'

/** Offer `request`'s body from `incoming`, unless the method carries none. */
export function offerIncomingBody(request: Request, incoming: IncomingMessage): void {
  const method = incoming.method
  if (method === 'GET' || method === 'HEAD') return
  offerDirectBody(request, new IncomingBody(incoming))
}

class IncomingBody implements DirectBody {
  constructor(private readonly incoming: IncomingMessage) {}

  read(limit: number): Promise<Uint8Array | typeof BODY_TOO_LARGE> | undefined {
    const incoming = this.incoming
    // Someone began reading it as a web stream (request.body, request.json()): theirs now.
    if (incoming.readableDidRead || incoming.readableEnded || incoming.listenerCount('data') > 0) return undefined
    return readIncoming(incoming, limit)
  }
}

/**
 * The whole body of `incoming`, or BODY_TOO_LARGE as soon as it passes
 * `limit`. Past the limit it stops reading and leaves the rest where it is:
 * the server drains it or closes the connection after the answer (see
 * connections.ts), so the next request on a kept-alive connection is safe.
 */
function readIncoming(incoming: IncomingMessage, limit: number): Promise<Uint8Array | typeof BODY_TOO_LARGE> {
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
