/**
 * Load on Node: 50,000 requests at concurrency 256 to the demo app's adder,
 * served by `edgeserve run` in its own process, every answer checked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { keepAliveAgent, request } from './lib/http.js'
import { adderLoad, expectEveryAnswerOnce } from './lib/load.js'
import { rssMb, sleep } from './lib/proc.js'
import { Recorder } from './lib/record.js'
import { startNode, type NodeServer } from './lib/servers.js'

const REQUESTS = 50_000
const CONCURRENCY = 256
/**
 * "Back near its baseline", after a full GC in the server: the JS heap within
 * 8 MB of where it started (a leak of 200 bytes per request would be 10 MB),
 * RSS within 128 MB (malloc arenas and V8 keep freed pages for a while; the
 * heap is the check for leaks, RSS for anything held outside it).
 */
const HEAP_SLACK_MB = 8
const RSS_SLACK_MB = 128

const recorder = new Recorder('1-load-node', 'Load on Node: the adder, 50,000 requests at concurrency 256')
let server: NodeServer
const agent = keepAliveAgent(CONCURRENCY)

beforeAll(async () => {
  server = await startNode(['examples/demo/app.ts'])
})
afterAll(async () => {
  agent.destroy()
  const code = await server?.stop()
  recorder.fact('exitCodeAfterSigterm', code)
  recorder.save()
})

describe('load on Node', () => {
  it('answers every one of 50,000 requests exactly once, each with its own sum (or 503 with Retry-After)', async () => {
    // Warm up (JIT, sockets), then take the baseline after a full GC.
    const warm = await adderLoad({ base: server.url, count: 2_000, concurrency: CONCURRENCY, first: 10_000_000, agent })
    expect(warm.ok).toBe(2_000)
    await sleep(500)
    await server.gc()
    const before = await server.gc()
    const rssBefore = rssMb(server.pid)

    const outcome = await adderLoad({ base: server.url, count: REQUESTS, concurrency: CONCURRENCY, first: 100_000_000, agent, recorder })
    await expectEveryAnswerOnce(outcome, REQUESTS, server.url, recorder, CONCURRENCY)

    // Memory back near its baseline once idle connections close and a GC runs.
    const rssPeak = rssMb(server.pid)
    agent.destroy()
    await sleep(1_000) // the server closes its side of 256 sockets
    await server.gc()
    await sleep(500)
    const settled = await server.gc()
    const rssAfter = rssMb(server.pid)
    recorder.fact('memory', {
      rssBeforeMb: rssBefore,
      rssAtEndOfLoadMb: rssPeak,
      rssAfterGcMb: rssAfter,
      heapUsedBeforeMb: before.heapUsedMb,
      heapUsedAfterMb: settled.heapUsedMb,
      bound: `heap after GC <= heap before + ${HEAP_SLACK_MB} MB; rss after GC <= rss before + ${RSS_SLACK_MB} MB`,
    })
    expect(rssAfter).toBeLessThanOrEqual(rssBefore + RSS_SLACK_MB)
    expect(settled.heapUsedMb).toBeLessThanOrEqual(before.heapUsedMb + HEAP_SLACK_MB)

    // Still healthy.
    expect((await request(server.url, { path: '/-/healthz' })).status).toBe(200)
    expect(recorder.leaks).toEqual([])
  })
})
