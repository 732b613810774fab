/**
 * Load through `wrangler dev`: 5,000 requests at concurrency 256 to the demo
 * app's adder, Worker -> router -> Durable Object -> batch queue, every answer
 * checked. Then: no URL reaches a Durable Object except through the app's routes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isJson, keepAliveAgent, request } from './lib/http.js'
import { adderLoad, expectEveryAnswerOnce } from './lib/load.js'
import { pidsInGroup, rssMb, sleep } from './lib/proc.js'
import { Recorder } from './lib/record.js'
import { startWranglerDev, type WranglerDev } from './lib/servers.js'

const REQUESTS = 5_000
const CONCURRENCY = 256
/**
 * workerd's RSS after the load: no GC can be forced from outside, and under
 * wrangler dev it grows with every request even for a route without any
 * Durable Object (docs/reliability.md), so this bound only catches runaway
 * growth, such as every request's body or batch being kept.
 */
const RSS_SLACK_MB = 512

const recorder = new Recorder('2-load-workers', 'Load through wrangler dev: the adder, 5,000 requests at concurrency 256')
const security = new Recorder('6-security-workers', 'Security on Workers: no URL reaches a Durable Object directly')
let dev: WranglerDev
const agent = keepAliveAgent(CONCURRENCY)

beforeAll(async () => {
  dev = await startWranglerDev()
}, 90_000)
afterAll(async () => {
  agent.destroy()
  await dev?.stop()
  recorder.save()
  security.save()
})

const workerdRss = () => Math.round(pidsInGroup(dev.pgid, 'workerd').reduce((sum, pid) => sum + rssMb(pid), 0) * 10) / 10

describe('load through wrangler dev', () => {
  it('answers every one of 5,000 requests exactly once, each with its own sum (or 503 with Retry-After)', async () => {
    const warm = await adderLoad({ base: dev.url, count: 300, concurrency: 64, first: 20_000_000, agent })
    expect(warm.ok).toBe(300)
    await sleep(200)
    const rssBefore = workerdRss()

    const outcome = await adderLoad({ base: dev.url, count: REQUESTS, concurrency: CONCURRENCY, first: 200_000_000, agent, recorder, timeoutMs: 60_000 })
    await expectEveryAnswerOnce(outcome, REQUESTS, dev.url, recorder, CONCURRENCY)

    agent.destroy()
    await sleep(500)
    const rssAfter = workerdRss()
    recorder.fact('memory', {
      workerdRssBeforeMb: rssBefore,
      workerdRssAfterMb: rssAfter,
      bound: `rss after <= rss before + ${RSS_SLACK_MB} MB (no forced GC in workerd; it grows under wrangler dev even without edgeserve)`,
    })
    expect(rssBefore).toBeGreaterThan(0)
    expect(rssAfter).toBeLessThanOrEqual(rssBefore + RSS_SLACK_MB)
    expect((await request(dev.url, { path: '/-/healthz', timeoutMs: 30_000 })).status).toBe(200)
    expect(recorder.leaks).toEqual([])
  })

  it('reaches Durable Objects only through the app routes: no path or header gets to one directly', async () => {
    const paths = [
      '/BatchAdder',
      '/BatchAdder/0',
      '/BatchAdder/BatchAdder%2F0',
      '/OriginAwareAdder/0',
      '/HousePricePredictor/0',
      '/-/rpc/default/BatchAdder/handleBatch',
      '/-/rpc/BatchAdder/handleBatch',
      '/-/do/BatchAdder/0',
      '/-/BatchAdder',
      '/__durable_object/BatchAdder',
      '/cdn-cgi/mf/BatchAdder',
      '/adder/../BatchAdder/0',
      '/%2e%2e/BatchAdder/0',
      '/BatchAdder/0/invoke',
      '/BatchAdder/0/resetForTest',
      '/resetForTest',
      '/invoke',
      '/-/invoke',
    ]
    const headerSets: Record<string, string>[] = [
      {},
      { 'cf-durable-object': 'BatchAdder' },
      { 'x-durable-object': 'BatchAdder/0', 'x-edgeserve-replica': '0' },
      { 'MF-Route-Override': 'BatchAdder', 'MF-Original-URL': 'http://127.0.0.1/BatchAdder/0' },
      { authorization: 'Bearer anything', 'content-type': 'application/json' },
    ]
    security.restart()
    const leaked: string[] = []
    const notJson = new Set<string>()
    for (const path of paths) {
      for (const headers of headerSets) {
        for (const method of ['GET', 'POST']) {
          const answer = await request(dev.url, { method, path, headers, body: method === 'POST' ? '{"args":[41]}' : undefined, timeoutMs: 20_000 })
          security.answer(answer)
          if (!isJson(answer)) notJson.add(Object.keys(headers).join(' + ') || '(no extra headers)')
          // Only the app answers: its 404. A replica would answer 200, 4xx JSON from a deployment, or a number.
          if (answer.status !== 404 || /^\d+$/.test(answer.text.trim()))
            leaked.push(`${method} ${path} ${JSON.stringify(headers)} -> ${answer.status} ${answer.text.slice(0, 80)}`)
        }
      }
    }
    security.fact('doReachabilityProbes', paths.length * headerSets.length * 2)
    // Which header sets got a 404 that is not the app's JSON one (wrangler dev's own proxy answers those).
    security.fact('headerSetsAnsweredBeforeTheWorker', [...notJson])
    expect(leaked).toEqual([])
    // The app's own route still works.
    expect((await request(dev.url, { path: '/adder?number=41' })).text).toBe('42')
    expect(security.leaks).toEqual([])
  })
})
