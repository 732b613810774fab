/**
 * The README's Workers sections, followed word for word in empty
 * directories: their `npm init` and `npm install` commands (with the packed
 * tarball for `edgeserve`, and the repository's pinned versions), their
 * files, then their own commands: `node make-model.mjs` (the models guide's
 * script, which the README links to) writes the model, `npx tsc` passes
 * without a word, and `npx wrangler dev` serves the Worker without a warning.
 * `wrangler deploy --dry-run` builds both (the plain one without
 * onnxruntime-web's WebAssembly, the model one with it, compiled by
 * wrangler's default rule), each about as large as the docs say.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { stripVTControlCharacters } from 'node:util'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../support/free-port.js'
import { ROOT } from '../support/spawn-server.js'
import type { GroupChild } from '../support/process-group.js'
import { batchSizes, docsFile, mustRun, nineQueries, readmeProject, runReadmeScript, startIn, type Project } from './lib/consumer.js'

/** Cloudflare's limit on a Worker's upload today, on every plan: 64 MiB before compression. */
const WORKER_SIZE_LIMIT = 64 * 1024 * 1024
/** The former Workers Paid limit, 10 MiB compressed: kept as a bound on how far the bundle may grow. */
const PAID_LIMIT = 10 * 1024 * 1024
/**
 * The upload sizes the docs give, each "about" a figure: a fresh install must come within a
 * tenth of it, so that a patch release of onnxruntime-web moves it no further unnoticed.
 */
const STATED_SIZES = {
  model: { doc: 'README.md', pattern: /The upload is about\s+(\d+)\s+MiB/, unit: 1024 * 1024 },
  plain: { doc: 'docs/workers.md', pattern: /adder without a model, about\s+(\d+)\s+KiB/, unit: 1024 },
} as const
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
  }
  // The model Worker's model: the script the README links to, saved in the project, then its `node make-model.mjs`.
  projects.model.write({ 'make-model.mjs': docsFile('docs/models.md', 'make-model.mjs') })
  for (const command of then.model.filter((each) => each.startsWith('node '))) await runReadmeScript(projects.model, command)
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

/** POST one row of features to the model Worker's /predict. */
const predictAt = (base: string, features: number[]) =>
  fetch(`${base}/predict`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ features }) })

/** Lines of wrangler's output that warn or report an error. */
const warnings = (output: string) =>
  stripVTControlCharacters(output)
    .split('\n')
    .filter((line) => /WARNING|\[wrangler:warn\]|\[ERROR\]|Uncaught|"level":"(warn|error)"/.test(line))

/** `wrangler deploy --dry-run` in the project: each output file (maps and README left out) and its bytes, and the upload wrangler reports. */
async function dryRun(kind: Kind): Promise<{ files: Map<string, Buffer>; uploadBytes: number }> {
  const outdir = mkdtempSync(join(tmpdir(), 'edgeserve-consumer-bundle-'))
  outdirs.push(outdir)
  const { stdout } = await mustRun('npx', ['--no', 'wrangler', 'deploy', '--dry-run', '--outdir', outdir], projects[kind].dir, 120_000)
  expect(stdout).toContain('--dry-run: exiting now.')
  const upload = /Total Upload: ([\d.]+) KiB/.exec(stripVTControlCharacters(stdout))
  if (!upload) throw new Error(`wrangler deploy --dry-run reported no Total Upload:\n${stdout}`)
  const names = readdirSync(outdir).filter((name) => !name.endsWith('.map') && name !== 'README.md')
  return { files: new Map(names.map((name) => [name, readFileSync(join(outdir, name))])), uploadBytes: Number(upload[1]) * 1024 }
}

/** The upload the docs state for `kind`'s Worker, in bytes, and where they state it. */
function statedUpload(kind: Kind): { bytes: number; where: string } {
  const { doc, pattern, unit } = STATED_SIZES[kind]
  const figure = pattern.exec(readFileSync(join(ROOT, doc), 'utf8'))?.[1]
  if (!figure) throw new Error(`${doc} no longer says ${pattern}: update STATED_SIZES with the sentence that gives the size`)
  return { bytes: Number(figure) * unit, where: `${doc} ("about ${figure} ${unit === 1024 ? 'KiB' : 'MiB'}")` }
}

/** wrangler's upload for a fresh install is within a tenth of what the docs say. */
function expectAsStated(kind: Kind, uploadBytes: number): void {
  const stated = statedUpload(kind)
  console.log(`${kind} Worker upload: ${(uploadBytes / 1024).toFixed(0)} KiB, stated in ${stated.where}`)
  const off = Math.abs(uploadBytes - stated.bytes) / stated.bytes
  expect(off, `the ${kind} Worker uploads ${(uploadBytes / 1024).toFixed(0)} KiB: update ${stated.where}`).toBeLessThanOrEqual(0.1)
}

describe('Workers, from the installed package', () => {
  it('the README’s commands made each project: ES modules, the tarball, wrangler, and for the model Worker its types and TypeScript', () => {
    expect(then).toEqual({
      plain: ['npx wrangler dev'],
      model: ['node make-model.mjs', 'npx tsc', 'npx wrangler dev', expect.stringMatching(/^curl .*\/predict$/)],
    })
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

  it('builds the JavaScript Worker without onnxruntime-web, about as large as the Workers guide says', async () => {
    const { files, uploadBytes } = await dryRun('plain')
    expect([...files.keys()]).toEqual(['worker.js'])
    const bundle = files.get('worker.js')!.toString()
    expect(bundle).toContain('serveWorker')
    expect(bundle).not.toContain('onnxruntime')
    expectAsStated('plain', uploadBytes)
  })

  it('builds the model Worker with ORT’s WebAssembly compiled by wrangler and the model as data, about as large as the README says and within Cloudflare’s limit', async () => {
    const { files, uploadBytes } = await dryRun('model')
    const names = [...files.keys()]
    expect(names.filter((name) => name.endsWith('ort-wasm-simd-threaded.wasm'))).toHaveLength(1)
    expect(names.filter((name) => name.endsWith('model.onnx'))).toHaveLength(1)
    const uploaded = [...files.values()].reduce((sum, bytes) => sum + bytes.byteLength, 0)
    expect(uploaded).toBeLessThan(WORKER_SIZE_LIMIT)
    const gzipped = [...files.values()].reduce((sum, bytes) => sum + gzipSync(bytes).byteLength, 0)
    expect(gzipped).toBeLessThan(PAID_LIMIT)
    expectAsStated('model', uploadBytes)
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
      const answers = await Promise.all(
        [FEATURES, FEATURES.map((x) => x * 1.1), FEATURES].map(async (features) => (await predict(features)).json() as Promise<{ prediction: number }>),
      )
      const predictions = answers.map((answer) => answer.prediction)
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
      expect(bad.status >= 400 && bad.status < 500, `a row of 3 numbers: ${bad.status} ${await bad.text()}`).toBe(true)
    } finally {
      await dev.stop()
    }
  })
})
