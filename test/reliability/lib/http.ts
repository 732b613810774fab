/**
 * A small HTTP/1.1 client over node:http for the reliability suite: keep-alive
 * agents for load, raw bytes in and out, and a hard deadline on every request
 * so that a hung server fails the test instead of hanging it.
 */
import http from 'node:http'

export interface Answer {
  status: number
  headers: http.IncomingHttpHeaders
  body: Buffer
  text: string
  ms: number
}

export interface RequestSpec {
  method?: string
  path: string
  headers?: Record<string, string | string[]>
  body?: Uint8Array | string
  /** Hard limit for the whole exchange. Default 30 s. */
  timeoutMs?: number
  agent?: http.Agent | false
  /** Aborting it hangs up: the socket is destroyed, as a client that goes away. */
  signal?: AbortSignal
}

export class HttpTimeoutError extends Error {
  override name = 'HttpTimeoutError'
}

export function keepAliveAgent(maxSockets: number): http.Agent {
  return new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets })
}

/**
 * One request to `base` (http://127.0.0.1:port). Rejects on a socket error or
 * past the deadline, and is never retried: a request lost on a reused
 * kept-alive connection is a server defect to find, not to hide.
 */
export function request(base: string, spec: RequestSpec): Promise<Answer> {
  const url = new URL(base)
  if (url.hostname !== '127.0.0.1') throw new Error(`the reliability suite only talks to 127.0.0.1, not ${url.hostname}`)
  const started = performance.now()
  return new Promise<Answer>((resolve, reject) => {
    const body = typeof spec.body === 'string' ? Buffer.from(spec.body) : spec.body
    const headers: Record<string, string | string[] | number> = { ...spec.headers }
    if (body && !hasHeader(headers, 'content-length') && !hasHeader(headers, 'transfer-encoding')) {
      headers['content-length'] = body.byteLength
    }
    const req = http.request(
      { host: url.hostname, port: url.port, method: spec.method ?? 'GET', path: spec.path, headers, agent: spec.agent ?? false },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () => {
          clearTimeout(timer)
          const all = Buffer.concat(chunks)
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: all, text: all.toString('utf8'), ms: performance.now() - started })
        })
        res.on('error', (error) => {
          clearTimeout(timer)
          reject(error)
        })
      },
    )
    const timer = setTimeout(() => {
      req.destroy(new HttpTimeoutError(`no answer to ${spec.method ?? 'GET'} ${spec.path.slice(0, 80)} within ${spec.timeoutMs ?? 30_000} ms`))
    }, spec.timeoutMs ?? 30_000)
    req.on('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    spec.signal?.addEventListener('abort', () => req.destroy(new Error('hung up by the client')), { once: true })
    if (body) req.end(body)
    else req.end()
  })
}

function hasHeader(headers: Record<string, unknown>, name: string): boolean {
  return Object.keys(headers).some((k) => k.toLowerCase() === name)
}

/** Run `count` tasks with at most `concurrency` at once; task i gets its index. */
export async function pool(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < count) await task(next++)
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker))
}

/** The JSON error body, if this is one: `{ error: { type, message } }`. */
export function errorOf(answer: Answer): { type: string; message: string } | undefined {
  try {
    const parsed = JSON.parse(answer.text) as { error?: { type?: unknown; message?: unknown } }
    const error = parsed?.error
    if (error && typeof error.type === 'string' && typeof error.message === 'string' && Object.keys(parsed).length === 1) {
      return { type: error.type, message: error.message }
    }
  } catch {
    // not JSON
  }
  return undefined
}

/** The `error.type` of a JSON error body, undefined if it has none. */
export const errorTypeIn = (body: string): unknown => (JSON.parse(body) as { error?: { type?: unknown } }).error?.type

export const isJson = (answer: Answer) => /^application\/json/i.test(String(answer.headers['content-type'] ?? ''))
