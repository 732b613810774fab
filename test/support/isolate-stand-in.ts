import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A stand-in for the bench Worker's /isolate-limit route, on a loopback
 * port: a request for `n` batches answers after `msFor(n)` milliseconds.
 */
export function isolateStandIn(msFor: (n: number) => number): Promise<{ base: string; server: Server }> {
  const server = createServer((request, response) => {
    request.resume()
    request.on('end', () => {
      const n = Number(new URL(request.url!, 'http://x').searchParams.get('n'))
      setTimeout(() => response.end('{}'), msFor(n))
    })
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server })))
}
