/**
 * The README's Workers examples in a project that installed the tarball:
 * `wrangler deploy --dry-run` builds both (the plain one without
 * onnxruntime-web's WebAssembly, the model one with it, compiled by
 * wrangler's default rule), and both answer under `wrangler dev`.
 * Wrangler is the repository's pinned one, run in the project, so it bundles
 * from the project's own node_modules.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../support/free-port.js'
import { ROOT } from '../support/spawn-server.js'
import type { GroupChild } from '../support/process-group.js'
import { WRANGLER, batchSizes, createProject, mustRun, nineQueries, pinnedVersion, readmeInstallFiles, startIn, type Project } from './lib/consumer.js'

/** Workers Paid: 10 MiB compressed. */
const PAID_LIMIT = 10 * 1024 * 1024
/** A small real model: 8 features in, one price out (examples/house-price). */
const MODEL = join(ROOT, 'examples/house-price/model/house-price.onnx')
const FEATURES = [8.3, 41, 6.9, 1.0, 322, 2.5, 37.88, -122.23]

let project: Project
const outdirs: string[] = []

beforeAll(async () => {
  project = await createProject('workers', ['hono', pinnedVersion('onnxruntime-web')])
  const prefix = (dir: string, files: Record<string, string>) => Object.fromEntries(Object.entries(files).map(([path, text]) => [`${dir}/${path}`, text]))
  project.write({
    ...prefix('plain', readmeInstallFiles('Workers, in JavaScript')),
    ...prefix('model', readmeInstallFiles('Workers, in TypeScript, with a model')),
    'model/model.onnx': readFileSync(MODEL),
  })
})

afterAll(() => {
  for (const dir of outdirs) rmSync(dir, { recursive: true, force: true })
})

/** `wrangler dev` in `dir`, on a free loopback port. */
async function wranglerDev(dir: string): Promise<{ base: string; dev: GroupChild }> {
  const port = await freePort()
  const argv = [process.execPath, WRANGLER, 'dev', '--ip', '127.0.0.1', '--port', String(port), '--inspector-port', '0']
  const dev = await startIn({ ...project, dir: join(project.dir, dir) }, argv, /Ready on/, {}, 90_000)
  return { base: `http://127.0.0.1:${port}`, dev }
}

/** `wrangler deploy --dry-run` in `dir`: each output file (maps and README left out) and its bytes. */
async function dryRun(dir: string): Promise<Map<string, Buffer>> {
  const outdir = mkdtempSync(join(tmpdir(), 'edgeserve-consumer-bundle-'))
  outdirs.push(outdir)
  const { stdout } = await mustRun(process.execPath, [WRANGLER, 'deploy', '--dry-run', '--outdir', outdir], join(project.dir, dir), 120_000)
  expect(stdout).toContain('--dry-run: exiting now.')
  const names = readdirSync(outdir).filter((name) => !name.endsWith('.map') && name !== 'README.md')
  return new Map(names.map((name) => [name, readFileSync(join(outdir, name))]))
}

describe('Workers, from the installed package', () => {
  it('builds the JavaScript Worker without onnxruntime-web', async () => {
    const files = await dryRun('plain')
    expect([...files.keys()]).toEqual(['worker.js'])
    const bundle = files.get('worker.js')!.toString()
    expect(bundle).toContain('serveWorker')
    expect(bundle).not.toContain('onnxruntime')
  })

  it('builds the model Worker with ORT’s WebAssembly compiled by wrangler and the model as data, within the paid limit', async () => {
    const files = await dryRun('model')
    const names = [...files.keys()]
    expect(names.filter((name) => name.endsWith('ort-wasm-simd-threaded.wasm'))).toHaveLength(1)
    expect(names.filter((name) => name.endsWith('model.onnx'))).toHaveLength(1)
    const gzipped = [...files.values()].reduce((sum, bytes) => sum + gzipSync(bytes).byteLength, 0)
    expect(gzipped).toBeLessThan(PAID_LIMIT)
  })

  it('serves the JavaScript Worker under `wrangler dev`: the README adder, batched in its Durable Object', async () => {
    const { base, dev } = await wranglerDev('plain')
    try {
      expect(await nineQueries(base)).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9'])
      const { batches, items } = await batchSizes(base, 'BatchAdder')
      expect(items).toBe(9)
      expect(batches).toBeGreaterThanOrEqual(3) // maxBatchSize 4
    } finally {
      await dev.stop()
    }
  })

  it('serves predictions from the model Worker under `wrangler dev`, batched in its Durable Object', async () => {
    const { base, dev } = await wranglerDev('model')
    try {
      const predict = (features: number[]) =>
        fetch(`${base}/predict`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ features }) })
      const answers = await Promise.all([FEATURES, FEATURES.map((x) => x * 1.1), FEATURES].map(async (features) => (await predict(features)).json()))
      const predictions = answers.map((answer) => (answer as { prediction: number }).prediction)
      for (const prediction of predictions) expect(Number.isFinite(prediction)).toBe(true)
      expect(predictions[2]).toBe(predictions[0]) // the same features, the same price, whichever batch they were in
      expect(predictions[1]).not.toBe(predictions[0])
      const notJson = await fetch(`${base}/predict`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: 'x' })
      expect(notJson.status).toBe(400)
      expect(((await notJson.json()) as { error: { message: string } }).error.message).toEqual(expect.any(String))
      const health = await fetch(`${base}/-/healthz`)
      expect(health.status).toBe(200)
      // Gathered from the Durable Object over RPC: the three predictions went through its batch queue.
      expect((await batchSizes(base, 'Predictor')).items).toBe(3)
    } finally {
      await dev.stop()
    }
  })
})
