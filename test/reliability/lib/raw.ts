/**
 * Raw HTTP/1.1 over a TCP socket, for what a well-behaved client cannot send:
 * a Content-Length the body never reaches, a chunked body that never ends.
 * Resolves when the server's answer head and body have arrived (or the socket
 * closes), with how many body bytes had been written by then.
 */
import net from 'node:net'

export interface RawOutcome {
  status: number
  head: string
  body: string
  bytesSent: number
  ms: number
}

export function rawExchange(
  base: string,
  head: string,
  feed: { first?: Uint8Array; chunked?: boolean; chunkBytes?: number; maxBytes?: number; plainBytes?: number },
  timeoutMs = 20_000,
): Promise<RawOutcome> {
  const url = new URL(base)
  if (url.hostname !== '127.0.0.1') throw new Error('loopback only')
  const started = performance.now()
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), '127.0.0.1')
    let received = Buffer.alloc(0)
    let bytesSent = 0
    let done = false
    const finish = (error?: Error) => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      const text = received.toString('utf8')
      const split = text.indexOf('\r\n\r\n')
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0)
      if (status === 0 && error) return reject(error)
      resolve({
        status,
        head: split < 0 ? text : text.slice(0, split),
        body: split < 0 ? '' : dechunk(text.slice(split + 4)),
        bytesSent,
        ms: performance.now() - started,
      })
    }
    const timer = setTimeout(() => finish(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs)
    const complete = () => {
      const text = received.toString('utf8')
      const split = text.indexOf('\r\n\r\n')
      if (split < 0) return false
      const length = /content-length: (\d+)/i.exec(text.slice(0, split))?.[1]
      if (length !== undefined) return Buffer.byteLength(text.slice(split + 4)) >= Number(length)
      return /\r\n0\r\n\r\n$/.test(text)
    }
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk])
      if (complete()) finish()
    })
    socket.on('close', () => finish(new Error('closed before an answer')))
    socket.on('error', () => finish(new Error('socket error')))
    socket.on('connect', () => {
      socket.write(head)
      if (feed.first) {
        socket.write(feed.first)
        bytesSent += feed.first.length
      }
      if (feed.plainBytes) {
        // A plain body of plainBytes, written as the socket takes it.
        const block = Buffer.alloc(64 * 1024, 0x20)
        const pump = () => {
          while (!done && bytesSent < feed.plainBytes!) {
            const part = block.subarray(0, Math.min(block.length, feed.plainBytes! - bytesSent))
            bytesSent += part.length
            if (!socket.write(part)) return void socket.once('drain', pump)
          }
        }
        return pump()
      }
      if (!feed.chunked) return
      // A chunked body that never ends: keep writing while the socket takes it.
      const chunk = Buffer.alloc(feed.chunkBytes ?? 16 * 1024, 0x20)
      const frame = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')])
      const pump = () => {
        while (!done && bytesSent < (feed.maxBytes ?? 256 * 1024 * 1024)) {
          bytesSent += chunk.length
          if (!socket.write(frame)) return void socket.once('drain', pump)
        }
      }
      pump()
    })
  })
}

function dechunk(body: string): string {
  if (!/^[0-9a-f]+\r\n/i.test(body)) return body
  let out = ''
  let rest = body
  for (;;) {
    const line = rest.indexOf('\r\n')
    const size = parseInt(rest.slice(0, line), 16)
    if (!size) return out
    out += rest.slice(line + 2, line + 2 + size)
    rest = rest.slice(line + 2 + size + 2)
  }
}
