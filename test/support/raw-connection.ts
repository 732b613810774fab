/**
 * One HTTP/1.1 connection over a raw TCP socket, kept open across requests,
 * as a pooling client keeps it: write whole requests, read whole answers in
 * order, and see how the connection ends (the server's FIN, or a reset).
 * No retry, no reconnect: a request lost on the connection is reported.
 */
import net from 'node:net'

export interface RawAnswer {
  status: number
  /** Header names in lower case. */
  headers: Record<string, string>
  body: string
}

export type ConnectionEnd = 'open' | 'fin' | `error ${string}`

export class RawConnection {
  private readonly socket: net.Socket
  private received = Buffer.alloc(0)
  private wake: (() => void) | undefined
  /** How the server ended the connection, as far as this side has seen. */
  end: ConnectionEnd = 'open'

  private constructor(socket: net.Socket) {
    this.socket = socket
    socket.on('data', (chunk: Buffer) => {
      this.received = Buffer.concat([this.received, chunk])
      this.wake?.()
    })
    socket.on('end', () => {
      if (this.end === 'open') this.end = 'fin'
      this.wake?.()
    })
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (this.end === 'open' || this.end === 'fin') this.end = `error ${error.code ?? error.message}`
      this.wake?.()
    })
    socket.on('close', () => this.wake?.())
  }

  static open(base: string): Promise<RawConnection> {
    const url = new URL(base)
    if (url.hostname !== '127.0.0.1') throw new Error(`raw connections go to 127.0.0.1 only, not ${url.hostname}`)
    return new Promise((resolve, reject) => {
      // No Nagle: a small request written after an answer goes at once, as HTTP clients send it.
      const socket = net.connect({ port: Number(url.port), host: '127.0.0.1', noDelay: true })
      socket.once('connect', () => {
        socket.off('error', reject)
        resolve(new RawConnection(socket))
      })
      socket.once('error', reject)
    })
  }

  /** Write bytes; resolves once the kernel took them, rejects if the connection failed first. */
  write(data: string | Uint8Array): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.socket.destroyed || !this.socket.writable) return reject(new Error(`the connection is closed (${this.end})`))
      this.socket.write(data, (error) => (error ? reject(error) : resolve()))
    })
  }

  /**
   * Write a request with a plain body of `bodyBytes` (or `body`), without
   * waiting for the kernel to take it all: the answer may come first, and
   * must be read meanwhile, as a real client does. Resolves once every byte
   * is written; rejects if the connection fails before that.
   */
  send(head: string, body: Uint8Array | number = 0): Promise<void> {
    const bytes = typeof body === 'number' ? Buffer.alloc(body, 0x61) : body
    const writes = [this.write(head)]
    // Large bodies go in blocks, so that the answer can be read between them.
    for (let at = 0; at < bytes.length; at += 256 * 1024) writes.push(this.write(bytes.subarray(at, at + 256 * 1024)))
    return Promise.all(writes).then(() => undefined)
  }

  /** The next whole answer on the connection; rejects if none comes within `timeoutMs` or the connection ends first. */
  async next(timeoutMs = 10_000): Promise<RawAnswer> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const answer = this.take()
      if (answer) return answer
      if (this.end !== 'open' || this.socket.destroyed) throw new Error(`the connection ended before an answer came (${this.end})`)
      const left = deadline - Date.now()
      if (left <= 0) throw new Error(`no answer within ${timeoutMs} ms`)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left)
        this.wake = () => {
          clearTimeout(timer)
          resolve()
        }
      })
      this.wake = undefined
    }
  }

  /** Wait (up to `timeoutMs`) for the server to end the connection; resolves with how it ended. */
  async ended(timeoutMs = 10_000): Promise<ConnectionEnd> {
    const deadline = Date.now() + timeoutMs
    while (this.end === 'open' && !this.socket.destroyed && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deadline - Date.now())
        this.wake = () => {
          clearTimeout(timer)
          resolve()
        }
      })
      this.wake = undefined
    }
    return this.end
  }

  close(): void {
    this.socket.destroy()
  }

  /** Go away as a client that crashed or lost its network does: a reset, not a FIN that may only half-close. */
  reset(): void {
    this.socket.resetAndDestroy()
  }

  /** Parse one whole answer off the front of what was received, if there is one. */
  private take(): RawAnswer | undefined {
    const split = this.received.indexOf('\r\n\r\n')
    if (split < 0) return undefined
    const [statusLine, ...lines] = this.received.subarray(0, split).toString('latin1').split('\r\n')
    const headers: Record<string, string> = {}
    for (const line of lines) {
      const colon = line.indexOf(':')
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
    }
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1] ?? 0)
    let rest = this.received.subarray(split + 4)
    let body: Buffer
    if (status === 100) {
      body = Buffer.alloc(0)
    } else if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
      const parts: Buffer[] = []
      for (;;) {
        const line = rest.indexOf('\r\n')
        if (line < 0) return undefined
        const size = parseInt(rest.subarray(0, line).toString('latin1'), 16)
        if (rest.length < line + 2 + size + 2) return undefined
        parts.push(rest.subarray(line + 2, line + 2 + size))
        rest = rest.subarray(line + 2 + size + 2)
        if (size === 0) break
      }
      body = Buffer.concat(parts)
    } else {
      const length = Number(headers['content-length'] ?? 0)
      if (rest.length < length) return undefined
      body = rest.subarray(0, length)
      rest = rest.subarray(length)
    }
    this.received = Buffer.from(rest)
    return { status, headers, body: body.toString('utf8') }
  }
}
