/**
 * `npm start`, the README's first command: the demo app on Node, PORT
 * overriding the port, and a line saying what to do when the port is taken.
 */
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { once } from 'node:events'
import { createServer, type AddressInfo } from 'node:net'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { ROOT, spawnServer } from '../support/spawn-server.js'

const run = promisify(execFile)

/** `npm start` with this PORT, when it is expected to stop by itself: its exit code and stderr. */
const npmStart = (port: string) =>
  run('npm', ['start'], { cwd: ROOT, env: { ...process.env, PORT: port } }).then(
    () => ({ code: 0, stderr: '' }),
    (error: { code: number; stderr: string }) => error,
  )

describe('npm start', () => {
  it('serves the demo app on the port PORT names, its models on threads: the adder answers while a page is read', { timeout: 60_000 }, async () => {
    const server = await spawnServer(['start'], { command: 'npm', env: { PORT: '0' }, group: true })
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      expect(await (await fetch(`${server.url}/adder?number=41`)).text()).toBe('42')
      // The OCR pipeline holds the threads it runs on for most of a second a
      // page; on the server's thread the adder would wait behind it.
      const page = readFileSync(`${ROOT}/test/fixtures/ocr-pages/letter.png`)
      const read = () => fetch(`${server.url}/ocr`, { method: 'POST', body: page, headers: { 'content-type': 'image/png' } })
      expect((await read()).status).toBe(200) // the models are loaded
      let done = false
      const reading = read().finally(() => (done = true))
      let answered = 0
      while (!done) {
        expect(await (await fetch(`${server.url}/adder?number=41`)).text()).toBe('42')
        if (!done) answered++
        await new Promise((resolve) => setTimeout(resolve, 25))
      }
      expect(((await (await reading).json()) as { text: string }).text).toContain('Quarterly')
      expect(answered).toBeGreaterThanOrEqual(5)
      // onnxruntime-node is installed here, so the same demo code runs its models natively, on their replicas' threads.
      const { models } = (await (await fetch(`${server.url}/-/routes`)).json()) as { models: { runtime: string; provider: string; thread: string }[] }
      const onThreads = models.filter((model) => /^(TextDetector|TextRecognizer|TextDirectionClassifier)\//.test(model.thread))
      expect(new Set(onThreads.map((model) => model.thread.split('/')[0]))).toEqual(new Set(['TextDetector', 'TextRecognizer', 'TextDirectionClassifier']))
      expect(new Set(onThreads.map((model) => `${model.runtime} ${model.provider}`))).toEqual(new Set(['onnxruntime-node cpu']))
    } finally {
      await server.stop()
    }
  })

  it('says which PORT to use when the port is taken, and exits 1', { timeout: 60_000 }, async () => {
    const holder = createServer().listen(0, '127.0.0.1')
    await once(holder, 'listening')
    const { port } = holder.address() as AddressInfo
    try {
      const failed = await npmStart(String(port))
      expect(failed.code).toBe(1)
      expect(failed.stderr).toContain(`edgeserve demo: port ${port} on 127.0.0.1 is in use; serve the demo on another one with PORT=${port + 1} npm start`)
      expect(failed.stderr).not.toMatch(/\bat .*\(/) // no stack trace
    } finally {
      holder.close()
    }
  })

  it('refuses a PORT that is not a port number, in one line', { timeout: 60_000 }, async () => {
    const failed = await npmStart('http')
    expect(failed.code).toBe(1)
    expect(failed.stderr).toContain('edgeserve demo: PORT must be a number from 0 to 65535, received "http"')
    expect(failed.stderr).not.toMatch(/\bat .*\(/)
  })
})
