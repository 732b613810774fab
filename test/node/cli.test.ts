import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { ROOT, spawnServer } from '../helpers/spawn-server.js'

const run = promisify(execFile)

describe('edgeserve run', () => {
  it('serves a file\'s default export on the given port and host, with --name', async () => {
    const server = await spawnServer(['run', 'examples/adder/app.ts', '--port', '0', '--host', '127.0.0.1', '--name', 'Adder-App'])
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      expect(server.output()).toContain('app "Adder-App" (deployments: BatchAdder)')
      const response = await fetch(`${server.url}/adder?number=41`)
      expect(await response.text()).toBe('42')
    } finally {
      expect(await server.stop()).toBe(0)
    }
  })

  it('serves a named export that is a single deployment at every path', async () => {
    const server = await spawnServer(['run', 'examples/adder/batch-adder.ts:adder', '--port', '0'])
    try {
      expect(await (await fetch(`${server.url}/anything?number=1`)).text()).toBe('2')
    } finally {
      await server.stop()
    }
  })

  it('on SIGTERM answers what is in flight, then exits 0', async () => {
    const server = await spawnServer(['run', 'test/node/fixtures/slow-app.ts', '--port', '0'])
    const inFlight = fetch(`${server.url}/slow?ms=700`)
    await new Promise((resolve) => setTimeout(resolve, 200))
    server.child.kill('SIGTERM')
    const response = await inFlight
    expect(response.status).toBe(200)
    expect(await response.text()).toBe('slept 700')
    expect(await server.exited).toBe(0)
    expect(server.output()).toContain('SIGTERM received, answering 1 in-flight request(s) before exit')
    await expect(fetch(`${server.url}/slow?ms=0`)).rejects.toThrow() // no longer accepting
  })

  it('explains what is wrong with a bad command line', async () => {
    const attempt = (args: string[]) =>
      run(process.execPath, ['bin/edgeserve.js', ...args], { cwd: ROOT }).then(
        () => ({ code: 0, stderr: '' }),
        (error: { code: number; stderr: string }) => error,
      )
    const missing = await attempt(['run', 'examples/nope.ts'])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('cannot find examples/nope.ts')
    const badExport = await attempt(['run', 'examples/adder/app.ts:nothing'])
    expect(badExport.stderr).toMatch(/has no export named "nothing" \(it exports: .*app/)
    const badPort = await attempt(['run', 'examples/adder/app.ts', '--port', 'http'])
    expect(badPort.stderr).toContain('--port must be a number from 0 to 65535, received "http"')
    const unknown = await attempt(['run', 'examples/adder/app.ts', '--prot', '1'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain("Unknown option '--prot'")
  })
})
