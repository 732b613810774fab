import { execFile } from 'node:child_process'
import { once } from 'node:events'
import { createServer, type AddressInfo } from 'node:net'
import { readFileSync } from 'node:fs'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { ROOT, spawnServer } from '../support/spawn-server.js'
import { waitFor } from '../support/wait-for.js'
import type { BatchTextGenerator } from '../../examples/text-generator/generator.js'
import type { OcrResult } from '../../examples/ocr/pipeline.js'

const run = promisify(execFile)

/** Run the CLI to its end: its exit code and what it wrote to stderr. */
const attempt = (args: string[]) =>
  run(process.execPath, ['bin/edgeserve.js', ...args], { cwd: ROOT }).then(
    () => ({ code: 0, stderr: '' }),
    (error: { code: number; stderr: string }) => error,
  )

describe('edgeserve run', () => {
  it("serves a file's default export on the given port and host, with --name", async () => {
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

  it("runs Ray Serve's text generator tutorial as documented: the text generator under --name Text-Completion-App", async () => {
    const server = await spawnServer(['run', 'examples/text-generator/app.ts', '--port', '0', '--name', 'Text-Completion-App', '--rpc-token', 'seed-003'])
    try {
      const text = await (await fetch(`${server.url}/?text=Once+upon+a+time`)).text()
      expect(text.length).toBeGreaterThan(10)
      const { connect } = await import('../../src/client/index.js')
      const handle = connect(server.url, { token: 'seed-003' }).getDeploymentHandle<BatchTextGenerator>('BatchTextGenerator', {
        app: 'Text-Completion-App',
      })
      const inputs = ['Once upon a time', 'Hi my name is Lewis and I like to', 'In a galaxy far far away']
      const results = await Promise.all(inputs.map((input) => handle.handleBatch.remote(input)))
      expect(results[0]).toBe(text) // greedy: the same prompt gives the same continuation
      expect(results.every((r) => typeof r === 'string' && r.length > 0)).toBe(true)
      const streamed: string[] = []
      for await (const token of handle.stream.remote('Once upon a time', 5)) streamed.push(token)
      expect(streamed.join('')).toBe(text.slice(0, 5))
    } finally {
      await server.stop()
    }
  })

  it('--threads runs the replicas on worker threads', async () => {
    const server = await spawnServer(['run', 'examples/adder/app.ts', '--port', '0', '--threads'])
    try {
      const sums = await Promise.all([1, 2, 3].map((n) => fetch(`${server.url}/adder?number=${n}`).then((r) => r.text())))
      expect(sums).toEqual(['2', '3', '4'])
      const health = (await (await fetch(`${server.url}/-/healthz`)).json()) as { replicas: { deployment: string; healthy: boolean }[] }
      expect(health.replicas).toEqual([expect.objectContaining({ deployment: 'BatchAdder', healthy: true })])
      const metrics = await (await fetch(`${server.url}/-/metrics`)).text()
      expect(metrics).toMatch(/edgeserve_batch_size_count\{deployment="BatchAdder",replica="0",method="handleBatch"\} \d+/)
    } finally {
      expect(await server.stop()).toBe(0)
    }
  })

  it('--log-level reaches the replicas on worker threads: debug writes their batches, silent nothing', async () => {
    const batchLines = (output: string) => output.split('\n').filter((line) => line.includes('"event":"batch"'))
    const debug = await spawnServer(['run', 'examples/adder/app.ts', '--port', '0', '--threads', '--log-level', 'debug'], { env: { EDGESERVE_LOG_LEVEL: '' } })
    try {
      expect(await (await fetch(`${debug.url}/adder?number=1`)).text()).toBe('2')
      await waitFor(() => batchLines(debug.output()).length > 0, 'a batch line from the replica thread')
    } finally {
      expect(await debug.stop()).toBe(0)
    }
    const silent = await spawnServer(['run', 'examples/adder/app.ts', '--port', '0', '--threads', '--log-level', 'silent'], {
      env: { EDGESERVE_LOG_LEVEL: 'debug' },
    })
    try {
      expect(await (await fetch(`${silent.url}/adder?number=1`)).text()).toBe('2')
    } finally {
      expect(await silent.stop()).toBe(0)
    }
    expect(batchLines(silent.output())).toEqual([])
  })

  it('--threads starts its replicas when node itself was given a V8 option', async () => {
    // From source, the replicas' threads get the process's flags plus a condition;
    // Node refuses a worker whose list holds a V8 option such as this one.
    const server = await spawnServer(['--max-old-space-size=1024', 'bin/edgeserve.js', 'run', 'examples/adder/app.ts', '--port', '0', '--threads'], {
      command: process.execPath,
    })
    try {
      expect(await (await fetch(`${server.url}/adder?number=41`)).text()).toBe('42')
    } finally {
      expect(await server.stop()).toBe(0)
    }
  })

  it('serves the OCR pipeline with no list of deployments: the stages bound into it are hosted too', { timeout: 120_000 }, async () => {
    const server = await spawnServer(['run', 'examples/ocr/app.ts', '--port', '0'])
    try {
      expect(server.output()).toContain('(deployments: OcrPipeline, TextDetector, TextDirectionClassifier, TextRecognizer)')
      const receipt = readFileSync(new URL('../fixtures/ocr-pages/receipt.png', import.meta.url))
      const response = await fetch(`${server.url}/ocr`, { method: 'POST', body: receipt, headers: { 'content-type': 'image/png' } })
      expect(response.status).toBe(200)
      const { text } = (await response.json()) as OcrResult
      expect(text.split('\n')[0]).toBe('CORNER CAFE')
      const health = (await (await fetch(`${server.url}/-/healthz`)).json()) as { replicas: { deployment: string; healthy: boolean }[] }
      expect(health.replicas.map((r) => r.deployment)).toEqual(['OcrPipeline', 'TextDetector', 'TextDirectionClassifier', 'TextRecognizer'])
      expect(health.replicas.every((r) => r.healthy)).toBe(true)
    } finally {
      expect(await server.stop()).toBe(0)
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
    const missing = await attempt(['run', 'examples/nope.ts'])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('cannot find examples/nope.ts')
    // A file that is there but imports one that is not: Node's own message, which names the missing import.
    const brokenImport = await attempt(['run', 'test/node/fixtures/missing-import-app.ts'])
    expect(brokenImport.stderr).not.toContain('cannot find test/node/fixtures/missing-import-app.ts')
    expect(brokenImport.stderr).toContain('no-such-module')
    const badExport = await attempt(['run', 'examples/adder/app.ts:nothing'])
    expect(badExport.stderr).toMatch(/has no export named "nothing" \(it exports: .*app/)
    const badPort = await attempt(['run', 'examples/adder/app.ts', '--port', 'http'])
    expect(badPort.stderr).toContain('--port must be a number from 0 to 65535, received "http"')
    const unknown = await attempt(['run', 'examples/adder/app.ts', '--prot', '1'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain("Unknown option '--prot'")
  })

  it('says so when the module serves its app itself, rather than fail on a second server of it', { timeout: 30_000 }, async () => {
    // thread-server.ts calls serve(app, { name: 'thread-server' }) when imported.
    const twice = await attempt(['run', 'test/node/fixtures/thread-server.ts:app', '--name', 'thread-server', '--port', '0'])
    expect(twice.code).toBe(2)
    expect(twice.stderr).toContain(
      'edgeserve: test/node/fixtures/thread-server.ts serves its app itself when imported (it calls serve()): run it with node (or tsx), ' +
        'or give edgeserve run a module that exports the app without serving it',
    )
  })

  it('says why it cannot listen, in one line, when the port is taken or the address is not this machine’s', async () => {
    const holder = createServer().listen(0, '127.0.0.1')
    await once(holder, 'listening')
    const { port } = holder.address() as AddressInfo
    try {
      const taken = await attempt(['run', 'examples/adder/app.ts', '--port', String(port)])
      expect(taken.code).toBe(2)
      expect(taken.stderr.trim()).toBe(
        `edgeserve: cannot listen on 127.0.0.1:${port}: something else listens there; pass another --port (0 picks a free one), or stop what holds it`,
      )
    } finally {
      holder.close()
    }
    // 192.0.2.0/24 is reserved for documentation: no machine has it.
    const foreign = await attempt(['run', 'examples/adder/app.ts', '--port', '0', '--hostname', '192.0.2.1'])
    expect(foreign.code).toBe(2)
    expect(foreign.stderr).toContain('edgeserve: cannot listen on 192.0.2.1:0: this machine has no address 192.0.2.1')
    expect(foreign.stderr).not.toMatch(/\bat /) // no stack trace
  })
})
