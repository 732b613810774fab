/**
 * The README's "Node, in JavaScript" example in a project that installed
 * only the tarball and hono: no onnxruntime-web, no tsx, no TypeScript.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { batchSizes, createProject, nineQueries, readmeInstallFiles, run, startIn, type Project } from './lib/consumer.js'

const LISTENING = /listening on (http:\/\/127\.0\.0\.1:\d+)/
/** The bound for `npm install edgeserve hono`. */
const HELLO_WORLD_LIMIT = 10 * 1024 * 1024

/** An app whose batches take 100 ms, so that concurrent requests queue behind the first and share the next. */
const SLOW_APP = `import { Hono } from 'hono'
import { batch, deployment, ingress } from 'edgeserve'

class SlowAdder {
  handleBatch = batch(async (numbers) => {
    console.log(\`batch of \${numbers.length}\`)
    await new Promise((resolve) => setTimeout(resolve, 100))
    return numbers.map((n) => n + 1)
  }, { maxBatchSize: 4 })

  async fetch(request) {
    return String(await this.handleBatch(Number(new URL(request.url).searchParams.get('number'))))
  }
}

export const app = new Hono().get('/adder', ingress(deployment(SlowAdder)))
`

/** The README's app served from the user's own code, with serve() as the README says. */
const SERVER = `import { serve } from 'edgeserve/node'
import app from './app.mjs'

const server = await serve(app, { port: Number(process.env.PORT ?? 8000) })
console.log(\`listening on \${server.url}\`)
`

/** serve() with every replica on a worker thread, which imports this very module to find the class. */
const THREADS_SERVER = `import { serve } from 'edgeserve/node'
import { app } from './slow-app.mjs'

const server = await serve(app, { port: 0, threads: { module: new URL('./slow-app.mjs', import.meta.url) } })
console.log(\`listening on \${server.url}\`)
`

const sizesLogged = (output: string) => [...output.matchAll(/batch of (\d+)/g)].map((m) => Number(m[1]))
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0)

let project: Project

beforeAll(async () => {
  project = await createProject('node-js', ['hono'], {
    ...readmeInstallFiles('Node, in JavaScript'),
    'server.mjs': SERVER,
    'slow-app.mjs': SLOW_APP,
    'threads.mjs': THREADS_SERVER,
  })
})

describe('a JavaScript app on Node, from the installed package', () => {
  it('installs in under 10 MB, without onnxruntime-web, tsx or TypeScript', () => {
    const bytes = project.installedBytes()
    console.log(`hello-world install (edgeserve + hono): ${(bytes / 1024 / 1024).toFixed(2)} MiB`)
    expect(bytes).toBeLessThan(HELLO_WORLD_LIMIT)
    for (const absent of ['onnxruntime-web', 'tsx', 'typescript']) expect(existsSync(join(project.dir, 'node_modules', absent))).toBe(false)
  })

  it('`npx edgeserve run app.mjs` serves the README app, batching what arrives together, and answers a bad number 400', async () => {
    const server = await startIn(project, ['npx', '--no', 'edgeserve', 'run', 'app.mjs'], LISTENING, { PORT: '0' })
    try {
      const base = server.match[1]!
      expect(await nineQueries(base)).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9'])
      const { batches, items } = await batchSizes(base, 'BatchAdder')
      expect(items).toBe(9)
      expect(batches).toBeGreaterThanOrEqual(3) // maxBatchSize 4
      expect(batches).toBeLessThanOrEqual(9)
      // A word, a fraction, none or an empty number: a 400 JSON error, not NaN or 1.
      for (const query of ['?number=abc', '?number=1.5', '', '?number=']) {
        const bad = await fetch(`${base}/adder${query}`)
        expect([bad.status, await bad.json()], `/adder${query}`).toEqual([400, { error: { type: 'HTTPError', message: 'number must be an integer' } }])
      }
      const nowhere = await fetch(`${base}/nowhere`)
      expect(nowhere.status).toBe(404)
    } finally {
      await server.stop()
    }
  })

  it('`node server.mjs` serves it with serve() from the user’s own code, and the dashboard page the package carries', async () => {
    const server = await startIn(project, [process.execPath, 'server.mjs'], LISTENING, { PORT: '0' })
    try {
      expect(await (await fetch(`${server.match[1]}/adder?number=41`)).text()).toBe('42')
      // The page is dist/generated/dashboard-page.js, reached through the package's "#dashboard-page" import.
      const page = await fetch(`${server.match[1]}/-/dashboard`)
      expect(page.status).toBe(200)
      expect(page.headers.get('content-type')).toMatch(/^text\/html/)
      expect(await page.text()).toContain('<script type="module">')
    } finally {
      await server.stop()
    }
  })

  it('serve(app, { threads }) runs the replica on a worker thread, and concurrent requests share batches', async () => {
    const server = await startIn(project, [process.execPath, 'threads.mjs'], LISTENING)
    try {
      const base = server.match[1]!
      expect(await nineQueries(base)).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9'])
      // The replica logs on its worker thread, whose console can reach the process's stdout after the answers.
      const sizes = sizesLogged(await server.waitForOutput((output) => sum(sizesLogged(output)) >= 9))
      expect(sum(sizes)).toBe(9)
      expect(Math.max(...sizes)).toBeGreaterThan(1)
      expect(Math.max(...sizes)).toBeLessThanOrEqual(4)
      const health = (await (await fetch(`${base}/-/healthz`)).json()) as { replicas: { deployment: string; healthy: boolean }[] }
      expect(health.replicas).toEqual([expect.objectContaining({ deployment: 'SlowAdder', healthy: true })])
    } finally {
      await server.stop()
    }
  })

  it('`edgeserve run --threads` does the same from the command line', async () => {
    const server = await startIn(project, ['npx', '--no', 'edgeserve', 'run', 'slow-app.mjs:app', '--port', '0', '--threads'], LISTENING)
    try {
      expect(await nineQueries(server.match[1]!)).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9'])
      const output = await server.waitForOutput((text) => sum(sizesLogged(text)) >= 9)
      expect(Math.max(...sizesLogged(output))).toBeGreaterThan(1)
    } finally {
      await server.stop()
    }
  })

  it('says what to install for a TypeScript app when neither tsx nor Node can load it', async () => {
    project.write({ 'app.ts': readmeInstallFiles('Node, in JavaScript')['app.mjs']! })
    const argv = ['npx', '--no', 'edgeserve', 'run', 'app.ts', '--port', '0']
    if ((process.features as { typescript?: unknown }).typescript) {
      // A Node that strips types (by default from 22.18) loads the app itself: it serves, and is stopped
      // with its process group (a timeout that killed npx alone left the server running).
      const server = await startIn(project, argv, LISTENING)
      try {
        expect(await nineQueries(server.match[1]!)).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9'])
      } finally {
        await server.stop()
      }
    } else {
      const result = await run(argv[0]!, argv.slice(1), project.dir, 30_000)
      expect(result.code).toBe(2)
      expect(result.stderr).toContain('app.ts is TypeScript')
      expect(result.stderr).toContain('npm install --save-dev tsx')
    }
  })

  it('says what to install when edgeserve/onnx is imported without onnxruntime-web', async () => {
    const result = await run(process.execPath, ['--input-type=module', '-e', "await import('edgeserve/onnx')"], project.dir, 30_000)
    expect(result.code).not.toBe(0)
    expect(result.stderr).toContain('edgeserve/onnx needs onnxruntime-web, which is not installed: npm install onnxruntime-web')
  })
})
