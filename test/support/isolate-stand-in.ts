import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { onTestFinished } from 'vitest'

/**
 * A stand-in for the bench Worker's /isolate-limit route, on a loopback
 * port: a request for `n` batches answers after `msFor(n)` milliseconds.
 * Called from a test, it closes when that test finishes.
 */
export async function isolateStandIn(msFor: (n: number) => number): Promise<{ base: string }> {
  const server = createServer((request, response) => {
    request.resume()
    request.on('end', () => {
      const n = Number(new URL(request.url!, 'http://x').searchParams.get('n'))
      setTimeout(() => response.end('{}'), msFor(n))
    })
  })
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}
