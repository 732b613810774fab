/**
 * An answer given before the request body is read, on Workers. workerd
 * cannot be told to close the connection (it drops a `Connection: close`
 * header from a Worker's answer), and a body left unread or half read when
 * the answer goes out breaks the connection: forwarded to a Durable Object
 * that answered without reading it, the body's pump fails ("Can't read from
 * request stream after response has been sent"), the client's next request
 * on the connection hangs, and an upload still being written can lose even
 * its own answer. So the rest of the body is read before the answer goes
 * out: a small one by the Durable Object (hasSmallBody), any other by the
 * Worker, which gives the app that body through a pipe of our own, so that
 * whatever it does with it (reads part and cancels, as a size limit does, or
 * never reads it) the rest is still ours to read afterwards.
 */

/**
 * The most body bytes read, and thrown away, after an early answer. Larger
 * than on Node, where a larger body is refused with `Connection: close`:
 * here not reading it is the only other choice, and it breaks the connection.
 */
export const DRAIN_LIMIT_BYTES = 64 * 1024 * 1024
/** The longest wait for the rest of the body. */
export const DRAIN_TIMEOUT_MS = 10_000

export interface WatchedRequest {
  /** The request to hand to the app: the same, with a body the app can read or leave. */
  readonly request: Request
  /**
   * Call with the app's answer before returning it: reads the rest of the
   * body (up to the drain bounds) if the app never read it or refused the
   * request. A success answer given while the body is still being read may
   * be streaming it, so its body is left to it.
   */
  readRestAfter(answer: Response): Promise<void>
}

/** Bodies of at most this many bytes, by their Content-Length, go to the app as they came (see hasSmallBody). */
export const WHOLE_BODY_BYTES = 64 * 1024

/**
 * Whether the request declares a body of at most WHOLE_BODY_BYTES. The app
 * gets such a request as it came. Answered in the Worker, workerd reads what
 * is left of it itself; forwarded to a Durable Object, the object reads what
 * its app left before it answers (readIfUnread), or an early answer (a 415
 * before the last bytes arrived) breaks the Worker's pump and the client's
 * connection. Reading every small body whole before the app saw it, and
 * making a new Request of it, cost a Worker route that reads JSON about a
 * fifth of its speed. Any other body (larger, or of undeclared length) gets
 * watchBody(). Decided by the header alone: `request.body` makes a stream
 * object on each call.
 */
export function hasSmallBody(request: Request): boolean {
  const declared = request.headers.get('content-length')
  return declared !== null && Number(declared) <= WHOLE_BODY_BYTES
}

/**
 * Read and discard a small body the app never read, before its answer goes
 * out (in a Durable Object). A client that went away mid-body leaves nothing to read.
 */
export async function readIfUnread(request: Request): Promise<void> {
  if (!request.bodyUsed) await request.arrayBuffer().catch(() => undefined)
}

/**
 * workerd's own byte pipe. Not a JavaScript `ReadableStream`: workerd pumps
 * a JavaScript stream into a Durable Object the request is forwarded to, and
 * when the object answers without reading it that pump breaks and is logged
 * as "Uncaught Error: Network connection lost." for every early answer. This
 * pipe's end just sees its reader gone. Nor is the pipe ever aborted: an
 * error put into it reaches that pump and is logged the same way.
 */
declare const IdentityTransformStream: (new () => TransformStream<Uint8Array, Uint8Array>) | undefined
/** Outside workerd (a test calling serveWorker() in Node, say), the standard stream does the same. */
const inWorkerd = typeof IdentityTransformStream === 'function'
const Pipe = inWorkerd ? IdentityTransformStream : TransformStream<Uint8Array, Uint8Array>

/** A request without a body has nothing left to read. */
const nothingLeft = async (): Promise<void> => undefined

export function watchBody(request: Request): WatchedRequest {
  const source = request.body
  if (!source) return { request, readRestAfter: nothingLeft }
  const reader = source.getReader()
  // workerd allows one pending read on a request body: reads queue here.
  let lastRead: Promise<unknown> = Promise.resolve()
  const read = () => {
    const next = lastRead.catch(() => undefined).then(() => reader.read())
    lastRead = next
    return next
  }
  const pipe = new Pipe()
  const writer = pipe.writable.getWriter()
  let touched = false
  let finished = false
  let detached = false
  // The body goes to the app a chunk at a time: a write resolves once the app
  // (or the Durable Object it forwarded the request to) has taken the chunk,
  // so at most one chunk is read before the app asks for the body.
  void (async () => {
    for (;;) {
      let next: ReadableStreamReadResult<Uint8Array>
      try {
        next = await read()
      } catch (error) {
        // The client went away mid-body: the app's read fails as the platform's would.
        if (!detached) await writer.abort(error)
        return
      }
      if (next.done) finished = true
      if (next.done || detached) return void (await writer.close())
      await writer.write(next.value)
      touched = true
      // The app answered meanwhile: it gets the end of the body, readRestAfter() reads the rest.
      if (detached) return void (await writer.close())
    }
  })().catch(() => undefined) // the app stopped reading (a size limit, an early answer)
  return {
    // Elsewhere a stream body needs `duplex` (workerd's Request has no such option).
    request: new Request(request, inWorkerd ? { body: pipe.readable } : ({ body: pipe.readable, duplex: 'half' } as RequestInit)),
    async readRestAfter(answer) {
      if (finished || (touched && answer.status < 400)) return
      // The app is done with the body. A chunk written and never taken stays
      // pending (nothing waits for it); the rest is read and thrown away here.
      detached = true
      await drain(read, reader)
    },
  }
}

async function drain(read: () => Promise<ReadableStreamReadResult<Uint8Array>>, reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  let bytes = 0
  let timer: ReturnType<typeof setTimeout> | undefined
  const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), DRAIN_TIMEOUT_MS)))
  try {
    for (;;) {
      const result = await Promise.race([read(), timedOut])
      if (result === 'timeout' || result.done) {
        if (result === 'timeout') await reader.cancel().catch(() => undefined)
        return
      }
      bytes += result.value.byteLength
      if (bytes > DRAIN_LIMIT_BYTES) return void (await reader.cancel().catch(() => undefined))
    }
  } catch {
    // The client went away: nothing left to keep.
  } finally {
    clearTimeout(timer)
  }
}
