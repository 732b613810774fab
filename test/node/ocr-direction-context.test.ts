/**
 * The OCR direction example reads its body, then makes its batched call:
 * after an await. It names its request for that call, so serving it leaves
 * the process without AsyncLocalStorage, whose promise hooks would slow
 * every promise in it (every other route's too). A file of its own: the
 * switch is for the life of the module graph, which vitest gives each file.
 */
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { serve, type RunningServer } from '../../src/runtime/node/index.js'
import { contextTracking } from '../../src/deployment/context.js'
import { app } from '../../examples/ocr-direction/app.js'

const image = readFileSync(new URL('../fixtures/ocr/hello-world.png', import.meta.url))
let server: RunningServer
let log: ReturnType<typeof vi.spyOn>
beforeAll(async () => {
  log = vi.spyOn(console, 'log').mockImplementation(() => undefined)
  server = await serve(app, { port: 0, name: 'ocr-direction-context', handleSignals: false, dashboard: false })
})
afterAll(async () => {
  await server.close()
  vi.restoreAllMocks()
})

describe('the OCR direction example, served on Node', () => {
  it('answers concurrent requests without switching to AsyncLocalStorage', { timeout: 60_000 }, async () => {
    const post = () => fetch(`${server.url}/ocr/direction`, { method: 'POST', body: image, headers: { 'content-type': 'image/png' } })
    const answers = await Promise.all(Array.from({ length: 8 }, async () => (await post()).json() as Promise<{ angle: number }>))
    expect(answers.map((a) => a.angle)).toEqual(Array(8).fill(0))
    expect(contextTracking()).toBe('synchronous')
    expect(log.mock.calls.map(([line]) => String(line)).filter((line) => line.includes('request context follows awaits'))).toEqual([])
  })
})
