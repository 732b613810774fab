/**
 * The README's "Node, in TypeScript, with a model" section as a reader
 * follows it, word for word, in an empty directory: its setup commands (with
 * the packed tarball for `edgeserve`), its app.ts, the models guide's
 * make-model.mjs that it links to, then its own commands: `node
 * make-model.mjs` writes the model, `npx edgeserve run app.ts` serves it, and
 * the README's curl body is answered with a price.
 *
 * The project has no onnxruntime-node, so its model runs on onnxruntime-web;
 * then onnxruntime-node is installed into it as the models guide says (with
 * scripts off, from npm's cache), and the same app, unchanged, runs on it.
 */
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { batchSizes, docsFile, openConnections, mustRun, pinnedVersion, readmeProject, runReadmeScript, startIn, type Project } from './lib/consumer.js'

const LISTENING = /listening on (http:\/\/127\.0\.0\.1:\d+)/

let project: Project
let then: string[]
/** The two rows' prices and a malformed row's status, as served on onnxruntime-web. */
let webPrices: number[] = []
let webMalformedStatus = 0

const ROWS = [
  [8.3, 41, 6.98, 1.02, 322, 2.55, 37.88, -122.23],
  [1.5, 20, 4.1, 1.1, 1200, 3.2, 34.05, -118.24],
]

/** Which runtime and provider run the app's models, from /-/routes. */
async function runtimesOf(base: string): Promise<string[]> {
  const { models } = (await (await fetch(`${base}/-/routes`)).json()) as { models: { runtime: string; provider: string }[] }
  return models.map((model) => `${model.runtime} ${model.provider}`)
}

beforeAll(async () => {
  ;({ project, then } = await readmeProject('Node, in TypeScript, with a model', 'readme-node-model'))
  // The script the README links to, saved beside app.ts; then the README's `node make-model.mjs`.
  project.write({ 'make-model.mjs': docsFile('docs/models.md', 'make-model.mjs') })
  for (const command of then.filter((each) => each.startsWith('node '))) await runReadmeScript(project, command)
})

describe('the README’s Node model section, word for word', () => {
  it('makes an ES module project with onnxruntime-web and tsx, writes the model, and serves it with `npx edgeserve run app.ts`', () => {
    const manifest = JSON.parse(readFileSync(join(project.dir, 'package.json'), 'utf8')) as {
      type?: string
      dependencies: Record<string, string>
      devDependencies?: Record<string, string>
    }
    expect(manifest.type).toBe('module')
    expect(Object.keys(manifest.dependencies).sort()).toEqual(['edgeserve', 'hono', 'onnxruntime-web'])
    expect(Object.keys(manifest.devDependencies ?? {})).toEqual(['tsx'])
    expect(then).toEqual(['node make-model.mjs', 'npx edgeserve run app.ts', expect.stringMatching(/^curl .*\/predict$/)])
    expect(existsSync(join(project.dir, 'model.onnx'))).toBe(true)
  })

  it('answers the README’s curl with a price, batches what arrives together, fails a malformed row alone and a body that is not JSON with a 400', async () => {
    const server = await startIn(project, ['npx', '--no', 'edgeserve', 'run', 'app.ts'], LISTENING, { PORT: '0' })
    try {
      const base = server.match[1]!
      const post = (body: string) => fetch(`${base}/predict`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })

      // The README's curl: its body, as its -d gives it. The stand-in model prices this block group at about $410,000.
      const readmeBody = /-d '([^']*)'/.exec(then.find((command) => command.startsWith('curl'))!)![1]!
      const fromReadme = await post(readmeBody)
      const answer = (await fromReadme.json()) as { prediction: number }
      expect([fromReadme.status, answer]).toEqual([200, { prediction: expect.any(Number) }])
      expect(answer.prediction).toBeGreaterThan(3)
      expect(answer.prediction).toBeLessThan(5)

      const rows = ROWS
      await openConnections(base, 20)
      const prices = await Promise.all(
        Array.from({ length: 16 }, async (_, i) => {
          const response = await post(JSON.stringify({ features: rows[i % 2] }))
          expect(response.status).toBe(200)
          return ((await response.json()) as { prediction: number }).prediction
        }),
      )
      // One row, one price, whatever batch it ran in; the two rows' prices differ.
      expect(new Set(prices.filter((_, i) => i % 2 === 0)).size).toBe(1)
      expect(new Set(prices).size).toBe(2)
      const { batches, items } = await batchSizes(base, 'Predictor')
      expect(items).toBe(17)
      expect(batches).toBeLessThan(17)

      // A burst with one malformed row (2 features, not 8): every good row still gets its own price, the malformed one a 4xx.
      const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => post(JSON.stringify({ features: i === 9 ? [1, 2] : rows[i % 2] }))))
      for (const [i, response] of burst.entries()) {
        if (i === 9) continue
        expect(response.status, `good row ${i}`).toBe(200)
        expect(((await response.json()) as { prediction: number }).prediction).toBe(prices[i % 2])
      }
      const malformed = burst[9]!
      expect(malformed.status, await malformed.clone().text()).toBeGreaterThanOrEqual(400)
      expect(malformed.status).toBeLessThan(500)
      expect(await malformed.json()).toMatchObject({ error: { message: expect.stringContaining('[8]') } })
      const notJson = await post('{"features": [1, 2')
      expect(notJson.status).toBe(400)
      expect(await notJson.json()).toMatchObject({ error: { type: expect.any(String), message: expect.any(String) } })
      // Without onnxruntime-node, as before it existed: onnxruntime-web's WebAssembly.
      expect(await runtimesOf(base)).toEqual(['onnxruntime-web wasm'])
      webPrices = prices.slice(0, 2)
      webMalformedStatus = malformed.status
    } finally {
      await server.stop()
    }
  })
})

describe('the same project after npm install onnxruntime-node --ignore-scripts', () => {
  beforeAll(async () => {
    await mustRun(
      'npm',
      ['install', pinnedVersion('onnxruntime-node'), '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline'],
      project.dir,
      240_000,
    )
  })

  it('runs the unchanged app on onnxruntime-node: the same prices, batching, a malformed row alone', async () => {
    expect(webPrices).toHaveLength(2)
    const server = await startIn(project, ['npx', '--no', 'edgeserve', 'run', 'app.ts'], LISTENING, { PORT: '0' })
    try {
      const base = server.match[1]!
      const post = (body: string) => fetch(`${base}/predict`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
      await openConnections(base, 20)
      const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => post(JSON.stringify({ features: i === 9 ? [1, 2] : ROWS[i % 2] }))))
      for (const [i, response] of burst.entries()) {
        if (i === 9) continue
        expect(response.status, `good row ${i}`).toBe(200)
        // Native kernels round otherwise than WebAssembly's: the same price to well under a dollar (in $100,000s).
        expect(((await response.json()) as { prediction: number }).prediction).toBeCloseTo(webPrices[i % 2]!, 4)
      }
      expect(burst[9]!.status).toBe(webMalformedStatus)
      expect(await burst[9]!.json()).toMatchObject({ error: { message: expect.stringContaining('[8]') } })
      const { batches, items } = await batchSizes(base, 'Predictor')
      expect(items).toBe(20) // the malformed row reached the batch, which ran again without it
      expect(batches).toBeLessThan(20)
      expect(await runtimesOf(base)).toEqual(['onnxruntime-node cpu'])
    } finally {
      await server.stop()
    }
  })
})
