/**
 * The keep-alive case: on one raw kept-alive connection, pairs of (a request
 * the server refuses before reading its body, a good request). Every refusal
 * must be a JSON error with its status that keeps the connection, and every
 * good request must get its right answer on the same connection. Nothing is
 * retried and no connection is reopened: a lost request is a failure.
 */
import { RawConnection, type RawAnswer } from '../../support/raw-connection.js'
import { errorOf, type Answer } from './http.js'
import type { Prng } from './prng.js'
import type { Recorder } from './record.js'

/** A request the demo app refuses on its head alone, before reading its body. */
export interface Rejection {
  name: string
  path: string
  contentType: string
  status: number
  extraHeaders?: string
  /**
   * Refused inside a batch: /predict batches whole requests and waits up to
   * 100 ms for one to fill, so its refusal takes that long.
   */
  waitsForABatch?: boolean
  /** Refused for its size: only bodies of at least this many bytes are sent with it. */
  minBytes?: number
  /** Refused for its kind only up to this size: a larger body is another refusal (its size's). */
  maxBytes?: number
}

/** Refusals the demo app gives on Node and on Workers alike. */
export const REJECTIONS: readonly Rejection[] = [
  // By a deployment, in its replica (a Durable Object on Workers).
  { name: 'OCR: not an image type', path: '/ocr/direction', contentType: 'text/plain', status: 415 },
  { name: 'predict: not JSON', path: '/predict', contentType: 'text/plain', status: 415, waitsForABatch: true, maxBytes: 16 * 1024 },
  // Declared past the deployment's batching.maxBodyBytes (16 KiB): a 413 on the Content-Length alone, before it joins a batch.
  { name: 'predict: body past the limit', path: '/predict', contentType: 'application/json', status: 413, minBytes: 16 * 1024 + 1 },
  // Declared past readJson()'s 16 KiB limit: a 413 on the Content-Length alone.
  {
    name: 'regional predict: body past the limit',
    path: '/regional/predict',
    contentType: 'application/json',
    status: 413,
    extraHeaders: 'edgeserve-multiplexed-model-id: north\r\n',
    minBytes: 16 * 1024 + 1,
  },
  // By the app itself, before any replica.
  { name: 'no such route', path: '/no-such-route', contentType: 'application/octet-stream', status: 404 },
]

/** Refused on Node by the remote-handle route, when started with an RPC token. */
export const WRONG_RPC_TOKEN: Rejection = {
  name: 'remote handle: wrong token',
  path: '/-/rpc/default/BatchAdder/handleBatch',
  contentType: 'application/json',
  status: 401,
  extraHeaders: 'Authorization: Bearer not-the-token\r\n',
}

/** Bodies from 0 B to 1 MiB, around the sizes where servers change behaviour (socket buffers, 64 KiB, 1 MiB). */
export const SIZES = [0, 1, 1024, 16 * 1024, 64 * 1024, 64 * 1024 + 1, 256 * 1024, 1024 * 1024] as const

/** A size from 0 B to 1 MiB, log-uniform, so that small and large bodies both come up often. */
export const randomSize = (prng: Prng) => (prng.next() < 0.05 ? 0 : Math.min(1024 * 1024, Math.floor(2 ** (prng.next() * 20))))

export interface PairsOutcome {
  pairs: number
  goodAnswered: number
  bodyBytes: number
  seconds: number
  /** What went wrong, at most a few; the run stops at the first lost request. */
  failures: string[]
}

/**
 * Send `count` pairs over one connection. `pair(i)` says which refusal and
 * which body size pair i uses; the good request is `GET /adder?number=i`.
 */
export async function sendPairs(
  base: string,
  count: number,
  pair: (i: number) => { rejection: Rejection; size: number },
  options: { recorder?: Recorder; deadlineMs: number },
): Promise<PairsOutcome> {
  const started = performance.now()
  const outcome: PairsOutcome = { pairs: 0, goodAnswered: 0, bodyBytes: 0, seconds: 0, failures: [] }
  const connection = await RawConnection.open(base)
  const bodies = new Map<number, Buffer>()
  try {
    for (let i = 0; i < count; i++) {
      if (performance.now() - started > options.deadlineMs) {
        outcome.failures.push(`stopped after ${i} pairs: past the ${options.deadlineMs} ms bound`)
        break
      }
      const { rejection, size } = pair(i)
      let body = bodies.get(size)
      if (!body) bodies.set(size, (body = Buffer.alloc(size, 0x61)))
      const what = `pair ${i} (${rejection.name}, ${size} B)`
      const head =
        `POST ${rejection.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${rejection.contentType}\r\n` +
        `Content-Length: ${size}\r\n${rejection.extraHeaders ?? ''}\r\n`
      const sending = connection.send(head, body)
      sending.catch(() => undefined) // reported through next() below
      const refused = await connection.next()
      await sending
      outcome.pairs++
      outcome.bodyBytes += size
      options.recorder?.answer(asAnswer(refused))
      if (refused.status !== rejection.status || !errorOf(asAnswer(refused)))
        outcome.failures.push(`${what}: refused with ${refused.status} ${refused.body.slice(0, 120)}`)
      if (refused.headers.connection?.toLowerCase() === 'close') outcome.failures.push(`${what}: the refusal says Connection: close`)
      await connection.write(`GET /adder?number=${i} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`)
      const good = await connection.next()
      options.recorder?.answer(asAnswer(good))
      if (good.status === 200 && good.body === String(i + 1)) outcome.goodAnswered++
      else outcome.failures.push(`the good request after ${what}: ${good.status} ${good.body.slice(0, 120)}`)
      if (outcome.failures.length >= 5) break
    }
  } catch (error) {
    options.recorder?.transport(error)
    outcome.failures.push(`after ${outcome.pairs} pairs: ${(error as Error).message}`)
  } finally {
    connection.close()
  }
  outcome.seconds = Math.round((performance.now() - started) / 100) / 10
  return outcome
}

/** In the suite's answer shape, for the recorder (no latency: pairs are timed as a whole). */
const asAnswer = (raw: RawAnswer): Answer => ({ status: raw.status, headers: raw.headers, body: Buffer.from(raw.body), text: raw.body, ms: 0 })
