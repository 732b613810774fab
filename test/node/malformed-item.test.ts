/**
 * A malformed item fails alone, by default, on Node over a real
 * loopback HTTP server, with the real house-price model: see
 * test/support/malformed-item-suite.ts.
 */
import { afterAll, beforeAll, vi } from 'vitest'
import { serve, type RunningServer } from '../../src/runtime/node/index.js'
import { malformedItemApp } from '../support/malformed-item-app.js'
import { describeMalformedItem } from '../support/malformed-item-suite.js'

let server: RunningServer
beforeAll(async () => {
  vi.spyOn(console, 'log').mockImplementation(() => undefined)
  server = await serve(malformedItemApp, { port: 0, name: 'malformed-item', handleSignals: false })
})
afterAll(async () => {
  await server.close()
  vi.restoreAllMocks()
})

describeMalformedItem('Node', () => server.url)
