/**
 * The README's Workers sections, followed word for word in empty
 * directories: their `npm init` and `npm install` commands (with the packed
 * tarball for `edgeserve`, and the repository's pinned versions), their
 * files, then their own commands: `npx tsc` passes without a word, and
 * `npx wrangler dev` serves the Worker without a warning. `wrangler deploy
 * --dry-run` builds both (the plain one without onnxruntime-web's
 * WebAssembly, the model one with it, compiled by wrangler's default rule).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../support/free-port.js'
import { ROOT } from '../support/spawn-server.js'
import type { GroupChild } from '../support/process-group.js'
import { batchSizes, mustRun, nineQueries, readmeProject, startIn, type Project } from './lib/consumer.js'

/** Cloudflare's limit on a Worker's upload today, on every plan: 64 MiB before compression. */
const WORKER_SIZE_LIMIT = 64 * 1024 * 1024
/** The former Workers Paid limit, 10 MiB compressed: kept as a bound on how far the bundle may grow. */
const PAID_LIMIT = 10 * 1024 * 1024
/** A small real model: 8 features in, one price out (examples/house-price). */
const MODEL = join(ROOT, 'examples/house-price/model/house-price.onnx')
const FEATURES = [8.3, 41, 6.9, 1.0, 322, 2.5, 37.88, -122.23]

const SECTIONS = { plain: 'Workers, in JavaScript', model: 'Workers, in TypeScript, with a model' } as const
type Kind = keyof typeof SECTIONS

const projects = {} as Record<Kind, Project>
/** The README's commands after its files, per section: what the tests below run. */
const then = {} as Record<Kind, string[]>
const outdirs: string[] = []

beforeAll(async () => {
  for (const kind of Object.keys(SECTIONS) as Kind[]) {
    ;({ project: projects[kind], then: then[kind] } = await readmeProject(SECTIONS[kind], `workers-${kind}`))
    if (kind === 'model') projects[kind].write({ 'model.onnx': readFileSync(MODEL) })
  }
}, 600_000)

afterAll(() => {
  for (const dir of outdirs) rmSync(dir, { recursive: true, force: true })
})

/** The README's `npx wrangler dev`, in the project, on a free loopback port (the README's is 8787). */
async function wranglerDev(kind: Kind): Promise<{ base: string; dev: GroupChild }> {
  expect(then[kind]).toContain('npx wrangler dev')
  const port = await freePort()
  const argv = ['npx', '--no', 'wrangler', 'dev', '--ip', '127.0.0.1', '--port', String(port), '--inspector-port', '0']
  const dev = await startIn(projects[kind], argv, /Ready on/, {}, 90_000)
  return { base: `http://127.0.0.1:${port}`, dev }
}

/** Lines of wrangler's output that warn or report an error. */
/** POST one row of features to the model Worker's /predict. */
const predictAt = (base: string, features: number[]) =>
  fetch(`${base}/predict`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ features }) })

const warnings = (output: string) =>
  output
    .replace(/\x1b\[[0-9;]*m/g, '')
    .split('\n')
    .filter((line) => /WARNING|\[wrangler:warn\]|\[ERROR\]|Uncaught|"level":"(warn|error)"/.test(line))

/** `wrangler deploy --dry-run` in the project: each output file (maps and README left out) and its bytes. */
async function dryRun(kind: Kind): Promise<Map<string, Buffer>> {
  const outdir = mkdtempSync(join(tmpdir(), 'edgeserve-consumer-bundle-'))
  outdirs.push(outdir)
  const { stdout } = await mustRun('npx', ['--no', 'wrangler', 'deploy', '--dry-run', '--outdir', outdir], projects[kind].dir, 120_000)
  expect(stdout).toContain('--dry-run: exiting now.')
  const names = readdirSync(outdir).filter((name) => !name.endsWith('.map') && name !== 'README.md')
  return new Map(names.map((name) => [name, readFileSync(join(outdir, name))]))
}

describe('Workers, from the installed package', () => {
  it('the README’s commands made each project: ES modules, the tarball, wrangler, and for the model Worker its types and TypeScript', () => {
    expect(then).toEqual({ plain: ['npx wrangler dev'], model: ['npx tsc', 'npx wrangler dev', expect.stringMatching(/^curl .*\/predict$/)] })
    for (const kind of Object.keys(SECTIONS) as Kind[]) {
      const manifest = JSON.parse(readFileSync(join(projects[kind].dir, 'package.json'), 'utf8')) as { type?: string; dependencies: Record<string, string> }
      expect(manifest.type).toBe('module')
      expect(manifest.dependencies.edgeserve).toMatch(/^file:.*\.tgz$/)
      expect(existsSync(join(projects[kind].dir, 'node_modules/wrangler/package.json'))).toBe(true)
    }
    for (const name of ['typescript', '@cloudflare/workers-types', 'onnxruntime-web'])
      expect(existsSync(join(projects.model.dir, 'node_modules', name))).toBe(true)
  })

  it('`npx tsc` checks the model Worker under the README’s tsconfig without a word', async () => {
    expect(then.model).toContain('npx tsc')
    const { stdout, stderr } = await mustRun('npx', ['--no', 'tsc'], projects.model.dir, 120_000)
    expect(stdout + stderr).toBe('')
  })

  it('builds the JavaScript Worker without onnxruntime-web', async () => {
    const files = await dryRun('plain')
    expect([...files.keys()]).toEqual(['worker.js'])
    const bundle = files.get('worker.js')!.toString()
    expect(bundle).toContain('serveWorker')
    expect(bundle).not.toContain('onnxruntime')
  })

  it('builds the model Worker with ORT’s WebAssembly compiled by wrangler and the model as data, within Cloudflare’s size limit', async () => {
    const files = await dryRun('model')
    const names = [...files.keys()]
    expect(names.filter((name) => name.endsWith('ort-wasm-simd-threaded.wasm'))).toHaveLength(1)
    expect(names.filter((name) => name.endsWith('model.onnx'))).toHaveLength(1)
    const uploaded = [...files.values()].reduce((sum, bytes) => sum + bytes.byteLength, 0)
    expect(uploaded).toBeLessThan(WORKER_SIZE_LIMIT)
    const gzipped = [...files.values()].reduce((sum, bytes) => sum + gzipSync(bytes).byteLength, 0)
    expect(gzipped).toBeLessThan(PAID_LIMIT)
  })

  it('serves the JavaScript Worker under `wrangler dev`: the README adder, batched in its Durable Object, and a bad number gets a 400', async () => {
    const { base, dev } = await wranglerDev('plain')
    try {
      expect(await nineQueries(base)).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9'])
      const { batches, items } = await batchSizes(base, 'BatchAdder')
      expect(items).toBe(9)
      expect(batches).toBeGreaterThanOrEqual(3) // maxBatchSize 4
      // A word, a fraction, none or an empty number: a 400 JSON error from the Durable Object, not an answer.
      for (const query of ['?number=abc', '?number=1.5', '', '?number=']) {
        const bad = await fetch(`${base}/adder${query}`)
        expect([bad.status, await bad.json()], `/adder${query}`).toEqual([400, { error: { type: 'HTTPError', message: 'number must be an integer' } }])
      }
    } finally {
      await dev.stop()
    }
    expect(warnings(dev.output())).toEqual([])
  })

  it('serves predictions from the model Worker under `wrangler dev`, batched in its Durable Object', async () => {
    const { base, dev } = await wranglerDev('model')
    try {
      const predict = (features: number[]) => predictAt(base, features)
      const answers = await Promise.all([FEATURES, FEATURES.map((x) => x * 1.1), FEATURES].map(async (features) => (await predict(features)).json()))
      const predictions = answers.map((answer) => (answer as { prediction: number }).prediction)
      for (const prediction of predictions) expect(Number.isFinite(prediction)).toBe(true)
      expect(predictions[2]).toBe(predictions[0]) // the same features, the same price, whichever batch they were in
      expect(predictions[1]).not.toBe(predictions[0])
      const notJson = await fetch(`${base}/predict`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: 'x' })
      expect(notJson.status).toBe(400)
      expect(((await notJson.json()) as { error: { message: string } }).error.message).toEqual(expect.any(String))
      // The README's curl: its body, as its -d gives it, is answered with a price.
      const readmeBody = /-d '([^']*)'/.exec(then.model.find((command) => command.startsWith('curl'))!)![1]!
      const fromReadme = await fetch(`${base}/predict`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: readmeBody })
      expect([fromReadme.status, await fromReadme.json()]).toEqual([200, { prediction: expect.any(Number) }])
      const health = await fetch(`${base}/-/healthz`)
      expect(health.status).toBe(200)
      // Gathered from the Durable Object over RPC: the four predictions went through its batch queue.
      expect((await batchSizes(base, 'Predictor')).items).toBe(4)
    } finally {
      await dev.stop()
    }
    expect(warnings(dev.output())).toEqual([])
  })

  it('answers every good prediction of a burst that holds a malformed row, and the malformed row with a 4xx', async () => {
    const { base, dev } = await wranglerDev('model')
    try {
      const predict = (features: number[]) => predictAt(base, features)
      const houses = [1, 0.9, 1.1, 0.8, 1.2].map((f) => FEATURES.map((x, i) => (i === 2 ? x * f : x)))
      const alone: number[] = []
      for (const features of houses) alone.push(((await (await predict(features)).json()) as { prediction: number }).prediction)
      const [bad, ...good] = await Promise.all([predict([1, 2, 3]), ...houses.map(predict)])
      for (const [i, answer] of good.entries()) {
        expect(answer.status, `house ${i}: ${await answer.clone().text()}`).toBe(200)
        expect(((await answer.json()) as { prediction: number }).prediction).toBeCloseTo(alone[i]!, 4)
      }
      expect(bad!.status >= 400 && bad!.status < 500, `a row of 3 numbers: ${bad!.status} ${await bad!.text()}`).toBe(true)
    } finally {
      await dev.stop()
    }
  })
})
