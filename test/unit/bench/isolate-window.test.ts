import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { IsolateTimer, SETTLE_TRIES } from '../../../bench/isolate-limit.js'

/**
 * A stand-in for the bench Worker's /isolate-limit route, on a loopback port:
 * a request for `n` batches answers after n × 10 ms, and the first
 * `slowEmpties` requests for none after `slowMs`, as requests do that wait
 * behind the batches a served row leaves in the isolate.
 */
function isolateStandIn(slowEmpties: number, slowMs = 150): Promise<{ base: string; empties: () => number; server: Server }> {
  let empties = 0
  const server = createServer((request, response) => {
    request.resume()
    request.on('end', () => {
      const n = Number(new URL(request.url!, 'http://x').searchParams.get('n'))
      if (n === 0) empties++
      const ms = n === 0 ? (empties <= slowEmpties ? slowMs : 0) : n * 10
      setTimeout(() => response.end('{}'), ms)
    })
  })
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, empties: () => empties, server })),
  )
}

const cell = { model: 'ocr', mode: 'pipeline', batch: 8 } as const
let server: Server | undefined
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())))

describe('a window in the isolate', () => {
  it('waits out the work a load left before it times its empty request', async () => {
    const standIn = await isolateStandIn(3)
    server = standIn.server
    // 80 items in 100 ms and what HTTP adds: about 800 items/s. Timed against an empty request
    // that waited 150 ms, the same window reads negative.
    const itemsPerS = await new IsolateTimer(standIn.base).window(cell, 10)
    expect(itemsPerS).toBeGreaterThan(0)
    expect(itemsPerS).toBeLessThan(2000)
    // Three slow, then fast ones until one answers within SETTLED_MS (one on a quiet machine,
    // more where other tests share the cores), then the one timed.
    expect(standIn.empties()).toBeGreaterThanOrEqual(5)
  })

  it('stops waiting after SETTLE_TRIES empty requests when the isolate never settles', async () => {
    const standIn = await isolateStandIn(Infinity, 10)
    server = standIn.server
    await new IsolateTimer(standIn.base).window(cell, 1)
    expect(standIn.empties()).toBe(SETTLE_TRIES + 1)
  })
})
