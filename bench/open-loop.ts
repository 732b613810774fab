/**
 * An open-loop load: requests arrive as a Poisson process at a set rate,
 * whether or not earlier ones were answered, as users do (a closed loop of
 * c connections slows its arrivals when the server does, and so hides its
 * queueing). Sent over keep-alive HTTP connections on loopback, at most
 * `maxInFlight` at once: an arrival past that is counted as dropped, not
 * queued here, so the generator's own queue never hides the server's.
 * Latency is taken from each request's scheduled arrival, not from when the
 * timer let it go, so a late timer counts against the row (no coordinated
 * omission). autocannon's `overallRate` is not used: it paces its
 * connections evenly, without Poisson bursts, and times from the send.
 */
import { Agent, request } from 'node:http'
import { percentile } from './lib.js'
import { mulberry32 } from '../test/support/prng.js'

export interface OpenLoopSpec {
  url: string
  body: Buffer | string
  contentType: string
  /** Mean arrivals per second. */
  ratePerS: number
  durationS: number
  maxInFlight: number
  seed?: number
}

export interface OpenLoopRow {
  ratePerS: number
  /** Answers per second that came back 2xx. */
  answeredPerS: number
  p50Ms: number
  p99Ms: number
  /** Arrivals not sent because maxInFlight were in flight, and requests that failed or were not 2xx. */
  dropped: number
  failed: number
}

export async function openLoop(spec: OpenLoopSpec): Promise<OpenLoopRow> {
  const agent = new Agent({ keepAlive: true, maxSockets: spec.maxInFlight })
  const url = new URL(spec.url)
  const random = mulberry32(spec.seed ?? 1)
  const latencies: number[] = []
  let inFlight = 0
  let dropped = 0
  let failed = 0
  const pending: Promise<void>[] = []
  const send = (scheduled: number) =>
    new Promise<void>((resolve) => {
      const req = request(
        url,
        { method: 'POST', agent, headers: { 'content-type': spec.contentType, 'content-length': Buffer.byteLength(spec.body) } },
        (res) => {
          res.resume()
          res.on('end', () => {
            if (res.statusCode !== undefined && res.statusCode >= 200 && res.statusCode < 300) latencies.push(performance.now() - scheduled)
            else failed++
            resolve()
          })
        },
      )
      req.on('error', () => {
        failed++
        resolve()
      })
      req.end(spec.body)
    }).finally(() => inFlight--)
  const start = performance.now()
  const end = start + spec.durationS * 1000
  // Exponential gaps between arrivals: a Poisson process at ratePerS.
  let next = start
  while (next < end) {
    const now = performance.now()
    while (next <= now && next < end) {
      if (inFlight >= spec.maxInFlight) dropped++
      else {
        inFlight++
        pending.push(send(next))
      }
      next += (-Math.log(1 - random()) * 1000) / spec.ratePerS
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - performance.now())))
  }
  await Promise.all(pending)
  agent.destroy()
  return {
    ratePerS: spec.ratePerS,
    answeredPerS: latencies.length / spec.durationS,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    dropped,
    failed,
  }
}
