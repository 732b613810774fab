import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { measureIsolateLimits } from '../../../bench/isolate-limit.js'

/**
 * A stand-in for the bench Worker's /isolate-limit route, on a loopback port,
 * for an isolate that runs at a quarter of its speed until it has done
 * `coldMs` of batch work (40 ms a batch, then 10), as a fresh workerd isolate
 * runs the OCR pipeline for its first seconds of work.
 */
type StandIn = Server & { base: string }

function freshIsolateStandIn(coldMs: number): Promise<StandIn> {
  let worked = 0
  const server = createServer((request, response) => {
    request.resume()
    request.on('end', () => {
      const n = Number(new URL(request.url!, 'http://x').searchParams.get('n'))
      const ms = n * (worked < coldMs ? 40 : 10)
      worked += ms
      setTimeout(() => response.end('{}'), ms)
    })
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(Object.assign(server, { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }))))
}

const cases = [{ model: 'ocr' as const, mode: 'pipeline' as const, batches: [8] }]
let server: StandIn | undefined
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())))

describe("a fresh isolate's first cell", () => {
  it('is timed only after the warm-up, every round at the warm rate', async () => {
    server = await freshIsolateStandIn(1_000)
    const [row] = await measureIsolateLimits(server.base, cases, 3, 1_500)
    // Warm: 8 items every 10 ms, 800 items/s less what HTTP adds; cold reads a quarter of that.
    for (const round of row!.rounds) expect(round).toBeGreaterThan(500)
  })

  it('reads its first round cold with no more than one window of warm-up', async () => {
    server = await freshIsolateStandIn(1_000)
    const [row] = await measureIsolateLimits(server.base, cases, 3, 0)
    expect(row!.rounds[0]).toBeLessThan(300)
  })
})
