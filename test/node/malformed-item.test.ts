/**
 * A malformed item fails alone, by default, on Node over a real
 * loopback HTTP server, with the real house-price model: see
 * test/support/malformed-item-suite.ts. And a request whose body is slow
 * to arrive holds back no other, in process and on a replica thread:
 * see test/support/slow-body-suite.ts.
 */
import { afterAll, beforeAll, vi } from 'vitest'
import { serve, type RunningServer } from '../../src/runtime/node/index.js'
import { malformedItemApp } from '../support/malformed-item-app.js'
import { describeMalformedItem } from '../support/malformed-item-suite.js'
import { describeSlowBody } from '../support/slow-body-suite.js'

let server: RunningServer
let onThreads: RunningServer
beforeAll(async () => {
  vi.spyOn(console, 'log').mockImplementation(() => undefined)
  server = await serve(malformedItemApp, { port: 0, name: 'malformed-item', handleSignals: false })
  onThreads = await serve(malformedItemApp, {
    port: 0,
    name: 'malformed-item-threads',
    handleSignals: false,
    threads: { module: new URL('../support/malformed-item-app.ts', import.meta.url), deployments: ['MalformedRequestsPredictor'] },
  })
})
afterAll(async () => {
  await Promise.all([server?.close(), onThreads?.close()])
  vi.restoreAllMocks()
})

describeMalformedItem('Node', () => server.url)
describeSlowBody('Node', () => server.url)
describeSlowBody('Node worker threads', () => onThreads.url)
