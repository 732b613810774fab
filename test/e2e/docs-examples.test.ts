/**
 * The docs are code that runs: every TypeScript and JavaScript block of
 * README.md and docs/*.md is extracted (test/support/doc-blocks.ts), written
 * into a scratch project whose `edgeserve` is this repository, type-checked
 * strictly with the types of its runtime (Node's or Cloudflare's), and run:
 * scripts to their end, apps under `edgeserve run`, servers as written,
 * Workers in workerd. Each example that serves a model gets a burst of good
 * requests with one malformed request among them.
 *
 * Every block needs an entry in CHECKS, and every entry a block, so a new
 * block cannot go unchecked and a stale entry fails. A block that is a
 * fragment (a method shown alone, say) is type-checked inside the context
 * its entry gives, with the reason it cannot run; an excerpt of an example
 * must be that example's lines, in order (the example itself is
 * type-checked by `npm run typecheck` and served by the examples' tests).
 */
import { execFile } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { docBlocks, documents, filesFor, isCode, type DocBlock } from '../support/doc-blocks.js'
import { startInGroup, type GroupChild } from '../support/process-group.js'
import { ROOT } from '../support/spawn-server.js'
import { startWorker } from '../support/workerd.js'

const exec = promisify(execFile)

type Runtime = 'node' | 'workers'

interface Unit {
  block: DocBlock
  dir: string
  main: string
}

interface Check {
  runtime: Runtime
  /** Runs the block once it is written and type-checked; without it the block is only type-checked. */
  run?: (unit: Unit) => Promise<void>
  /** Files the example reads (a model, say), copied from the repository: name in the project → repository path. */
  assets?: Record<string, string>
  /** Files the block imports that the docs leave to the reader ("your app"), given here. */
  files?: Record<string, string>
  /** The block continues another one: the two are one program. */
  continues?: string
  /** A fragment: why it cannot run alone, and the context it is type-checked in. */
  fragment?: { why: string; wrap: (text: string) => string }
  /** An excerpt of this file of the repository: its lines, in order. */
  excerptOf?: string
  /** Written with the block it belongs to (a declarations file), not checked alone. */
  partOf?: string
  /** Text the test changes before running, each with its reason: a port the docs fix, say. */
  replace?: [from: string, to: string][]
}

// --- the examples' requests -------------------------------------------------

const HOUSE_PRICE_MODEL = 'examples/house-price/model/house-price.onnx'
/** The README's declaration of `.onnx` imports, which the Workers guide's Worker with a model points to. */
const ONNX_MODULE_TYPES = docBlocks('README.md').find((block) => block.name === 'onnx.d.ts')!.text
/** Block groups of California houses, inside the ranges the model was trained on. */
const HOUSES = [
  [8.3, 41, 6.9, 1.0, 322, 2.5, 37.88, -122.23],
  [8.3, 21, 6.2, 0.97, 2401, 2.1, 37.86, -122.22],
  [7.3, 52, 8.3, 1.07, 496, 2.8, 37.85, -122.24],
  [5.6, 52, 5.8, 1.07, 558, 2.5, 37.85, -122.25],
  [3.8, 52, 6.3, 1.08, 565, 2.2, 37.85, -122.25],
  [4.0, 52, 4.8, 1.06, 413, 2.1, 37.85, -122.25],
  [3.7, 52, 4.9, 1.1, 1094, 2.1, 37.84, -122.25],
]

async function adderAnswers(base: string): Promise<void> {
  const answers = await Promise.all(Array.from({ length: 9 }, (_, i) => fetch(`${base}/adder?number=${i}`).then((r) => r.text())))
  expect(answers).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9'])
  expect(await (await fetch(`${base}/adder?number=41`)).text()).toBe('42')
}

/** An adder that checks its number: a word, a fraction, none and an empty one each get a 400 JSON error, not an answer. */
async function adderRefusesBadNumbers(base: string): Promise<void> {
  for (const query of ['?number=x', '?number=1.5', '', '?number=']) await expectJsonError(await fetch(`${base}/adder${query}`), 400)
}

async function expectJsonError(response: Response, status: number): Promise<void> {
  expect(response.status).toBe(status)
  expect(response.headers.get('content-type')).toMatch(/^application\/json/)
  const body = (await response.json()) as { error?: { type?: unknown; message?: unknown } }
  expect(body.error).toEqual({ type: expect.any(String), message: expect.any(String) })
}

/**
 * A model example's answers: each house alone first (its right value), then
 * all of them at once with bad requests among them: a row of 3 numbers where
 * the model takes 8, a body that is not JSON, JSON that is no object of
 * features, and a number no float32 holds. Every good request is answered
 * 200 with its right value; the bad ones get a 4xx JSON error.
 */
async function modelBurst(base: string, path: string, answerKey: string, headers: Record<string, string> = {}): Promise<void> {
  const post = (body: string) => fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body })
  const predict = async (features: number[]) => {
    const response = await post(JSON.stringify({ features }))
    const text = await response.text()
    expect(response.status, text).toBe(200)
    const value = (JSON.parse(text) as Record<string, unknown>)[answerKey]
    expect(value).toEqual(expect.any(Number))
    return value as number
  }
  const alone: number[] = []
  for (const features of HOUSES) alone.push(await predict(features))
  expect(new Set(alone).size).toBe(HOUSES.length)
  // Sent together, so that the bad requests land in batches with good ones.
  const good = HOUSES.map((features) =>
    predict(features).then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    ),
  )
  const badRequests = [
    ['a row of 3 numbers', JSON.stringify({ features: [1, 2, 3] })],
    ['a body that is not JSON', '{"features": [1, 2'],
    ['a body of null', 'null'],
    ['an object without features', '{}'],
    ['a number no float32 holds', `{"features": [1e400, ${HOUSES[0]!.slice(1).join(', ')}]}`],
  ].map(([what, body]) => [what!, post(body!)] as const)
  const burst = await Promise.all(good)
  burst.forEach((answer, i) => {
    if ('error' in answer) throw new Error(`house ${i} in the burst with bad requests: ${String(answer.error)}`)
    expect(answer.value, `house ${i}`).toBeCloseTo(alone[i]!, 4)
  })
  for (const [what, answered] of badRequests) {
    const response = await answered
    const text = await response.clone().text()
    expect(response.status >= 400 && response.status < 500, `${what}: a 4xx, not ${response.status} ${text}`).toBe(true)
    await expectJsonError(response, response.status)
  }
}

// --- how blocks run ---------------------------------------------------------

const TSX = join(ROOT, 'node_modules/tsx/dist/loader.mjs')
const LISTENING = /listening on (http:\/\/127\.0\.0\.1:\d+)/

/** Run a script to its end in its project; its output. */
async function script(unit: Unit, env: Record<string, string> = {}): Promise<string> {
  const { stdout, stderr } = await exec(process.execPath, ['--import', TSX, unit.main], { cwd: unit.dir, env: { ...process.env, ...env }, timeout: 60_000 })
  expect(
    stderr.split('\n').filter((line) => /warn/i.test(line)),
    'nothing logged as a warning',
  ).toEqual([])
  return stdout + stderr
}

/** A long-running process in the project, until `use` is done with it. */
async function running(unit: Unit, argv: string[], use: (base: string, child: GroupChild) => Promise<void>, env: Record<string, string> = {}): Promise<void> {
  const child = await startInGroup(argv, LISTENING, env, 60_000, { cwd: unit.dir, baseEnv: process.env })
  try {
    await use(child.match[1]!, child)
  } finally {
    await child.stop()
  }
  const problems = child
    .output()
    .split('\n')
    .filter((line) => /warn|ExperimentalWarning|DeprecationWarning|"level":"error"/i.test(line))
  expect(problems, 'nothing logged as a warning').toEqual([])
}

/** `edgeserve run <block>`: a module that exports an app. */
const served = (use: (base: string) => Promise<void>) => (unit: Unit) =>
  running(unit, [process.execPath, join(ROOT, 'bin/edgeserve.js'), 'run', unit.main, '--port', '0'], use)

/** A module that serves itself, on the port PORT names. */
const selfServed = (use: (base: string) => Promise<void>) => (unit: Unit) => running(unit, [process.execPath, '--import', TSX, unit.main], use, { PORT: '0' })

/** A Worker project (its wrangler.toml among the docs' files) in workerd. */
const inWorkerd = (use: (base: string) => Promise<void>) => async (unit: Unit) => {
  // A Worker that does not build (an import the package lacks, say) leaves wrangler waiting rather than failing.
  let timer: ReturnType<typeof setTimeout> | undefined
  const worker = await Promise.race([
    startWorker(new URL(`file://${join(unit.dir, 'wrangler.toml')}`)),
    new Promise<never>(
      (_, reject) =>
        (timer = setTimeout(() => reject(new Error('workerd did not start within 60 s: does the Worker build? (WORKERD_LOG=log shows why)')), 60_000)),
    ),
  ]).finally(() => clearTimeout(timer))
  try {
    await use(worker.url)
  } finally {
    await worker.dispose()
  }
}

/** What the docs' own examples leave to the reader: an app, for the blocks that serve "your app". */
const ADDER_APP = `import { Hono } from 'hono'
import { batch, deployment, ingress } from 'edgeserve'

class BatchAdder {
  handleBatch = batch(async (numbers: number[]) => numbers.map((n) => n + 1), { maxBatchSize: 4 })
  async fetch(request: Request) {
    return String(await this.handleBatch(Number(new URL(request.url).searchParams.get('number'))))
  }
}

export const app = new Hono().get('/adder', ingress(deployment(BatchAdder)))
`

/** Loads the model that docs/models.md's script wrote and prices the houses in HOUSES, one batch. */
const CHECK_MODEL = `import { loadModel, stack } from 'edgeserve/onnx'
const houses = JSON.parse(process.env.HOUSES!) as number[][]
const model = await loadModel('model.onnx', { numThreads: 1 })
const output = await model.run({ [model.inputNames[0]!]: stack(houses, [8]) })
console.log(JSON.stringify(Array.from(output[model.outputNames[0]!]!.data as Float32Array)))
`

// --- every block, and what is done with it ----------------------------------

const CHECKS: Record<string, Check> = {
  'README.md › Node, in JavaScript': {
    runtime: 'node',
    run: served(async (base) => {
      await adderAnswers(base)
      await adderRefusesBadNumbers(base)
    }),
  },
  'README.md › Node, in TypeScript #2': {
    runtime: 'node',
    run: selfServed(async (base) => {
      await adderAnswers(base)
      await adderRefusesBadNumbers(base)
    }),
  },
  'README.md › Node, in TypeScript, with a model #2': {
    runtime: 'node',
    assets: { 'model.onnx': HOUSE_PRICE_MODEL },
    run: served((base) => modelBurst(base, '/predict', 'prediction')),
  },
  'README.md › Workers, in JavaScript #2': {
    runtime: 'workers',
    run: inWorkerd(async (base) => {
      await adderAnswers(base)
      await adderRefusesBadNumbers(base)
    }),
  },
  'README.md › Workers, in TypeScript, with a model #2': {
    runtime: 'workers',
    assets: { 'model.onnx': HOUSE_PRICE_MODEL },
    run: inWorkerd((base) => modelBurst(base, '/predict', 'prediction')),
  },
  'README.md › Workers, in TypeScript, with a model #3': { runtime: 'workers', partOf: 'README.md › Workers, in TypeScript, with a model #2' },
  'README.md › Batching': {
    runtime: 'node',
    run: async (unit) => expect((await script(unit)).replace(/\s+/g, ' ')).toContain('[ 1, 2, 3, 4, 5, 6, 7, 8, 9 ]'),
  },
  'docs/autoscaling-and-multiplexing.md › Autoscaling': { runtime: 'node', excerptOf: 'examples/autoscaling/scaled-adder.ts' },
  'docs/autoscaling-and-multiplexing.md › Model multiplexing': {
    runtime: 'node',
    assets: Object.fromEntries(['north', 'south', 'central'].map((region) => [`models/${region}.onnx`, `examples/regional-house-price/model/${region}.onnx`])),
    run: served(async (base) => {
      for (const region of ['north', 'south']) await modelBurst(base, '/predict', 'prediction', { 'edgeserve-multiplexed-model-id': region })
      await expectJsonError(await fetch(`${base}/predict`, { method: 'POST', body: JSON.stringify({ features: HOUSES[0] }) }), 400)
    }),
  },
  'docs/batching.md › Batching': {
    runtime: 'node',
    run: async (unit) => {
      const sizes = [...(await script(unit)).matchAll(/Our input array has shape: \((\d+),\)/g)].map((m) => Number(m[1]))
      expect(sizes.reduce((a, b) => a + b, 0)).toBe(9)
      expect(Math.max(...sizes)).toBeLessThanOrEqual(4)
    },
  },
  'docs/batching.md › Adaptive batch size': {
    runtime: 'node',
    run: async (unit) => {
      const [answer, limit] = (await script(unit)).trim().split(' ').map(Number)
      expect(answer).toBe(42)
      expect(Number.isInteger(limit) && limit! >= 1 && limit! <= 64).toBe(true)
    },
  },
  'docs/batching.md › A bad item fails alone': {
    runtime: 'node',
    fragment: {
      why: 'a batch handler around a model the reader has (runModel); run here with a stand-in for it',
      wrap: (text) => `const runModel = async (texts: string[]) => texts.map((text) => text.length)
${text}
const answers = await Promise.allSettled([embed('short'), embed('x'.repeat(600)), embed('also short')])
console.log(answers.map((a) => (a.status === 'fulfilled' ? a.value : (a.reason as { status: number }).status)).join(' '))
`,
    },
    run: async (unit) => expect((await script(unit)).trim()).toBe('5 413 10'),
  },
  'docs/batching.md › Call options, and the request a call belongs to': {
    runtime: 'node',
    continues: 'docs/batching.md › Batching',
    run: async (unit) => void (await script(unit)),
  },
  'docs/batching.md › Call options, and the request a call belongs to #2': {
    runtime: 'node',
    fragment: {
      why: 'a method shown alone, to say where in it a call inherits the request',
      wrap: (text) => `import { batch } from 'edgeserve'
declare function decode(bytes: ArrayBuffer): Float32Array
export class Classifier {
  classify = batch(async (images: Float32Array[]) => images.map((image) => image.length), { maxBatchSize: 8 })
${text}}
`,
    },
  },
  'docs/batching.md › Call options, and the request a call belongs to #3': {
    runtime: 'node',
    fragment: {
      why: 'the same method as written for a browser, where it runs inside a page',
      wrap: (text) => CHECKS['docs/batching.md › Call options, and the request a call belongs to #2']!.fragment!.wrap(text),
    },
  },
  'docs/batching.md › Continuous batching': {
    runtime: 'node',
    fragment: {
      why: "one field of the text generator's class (examples/text-generator/generator.ts), which the examples' tests serve",
      wrap: (text) => `import { batch, endOfStream } from 'edgeserve'
declare class Sequence { done: boolean; append(token: string): Sequence }
declare function argmax(logits: Float32Array, row: number): string
export class Generator {
  declare nextTokenLogits: (sequences: Sequence[]) => Promise<Float32Array>
${text}}
`,
    },
  },
  'docs/batching.md › Continuous batching #2': {
    runtime: 'node',
    fragment: {
      why: "a handle call from inside a route or a deployment, where env is the app's",
      wrap: (text) => `import { deployment, getHandle } from 'edgeserve'
class BatchTextGenerator {
  async *stream(prompt: string): AsyncIterableIterator<string> {
    yield prompt
  }
}
const textGenerator = deployment(BatchTextGenerator)
declare const env: unknown
${text}`,
    },
  },
  'docs/batching.md › The decorator': { runtime: 'node', run: async (unit) => expect((await script(unit)).trim()).toBe('42') },
  'docs/cli.md › `serve()`': {
    runtime: 'node',
    files: { 'app.ts': ADDER_APP },
    replace: [['port: 8000', 'port: 0']],
    run: selfServed(adderAnswers),
  },
  'docs/cli.md › Replicas on worker threads': {
    runtime: 'node',
    run: selfServed(async (base) => {
      await adderAnswers(base)
      await adderRefusesBadNumbers(base)
    }),
  },
  'docs/deployments.md › Deployments and routes': {
    runtime: 'node',
    run: served(async (base) => {
      await adderAnswers(base)
      await adderRefusesBadNumbers(base)
    }),
  },
  'docs/deployments.md › Handles': { runtime: 'node', run: async (unit) => expect((await script(unit)).trim()).toBe('42 2') },
  'docs/deployments.md › Handles #3': {
    runtime: 'node',
    // The docs' server is on port 8000; the test's is wherever a free port was.
    replace: [["'http://127.0.0.1:8000'", 'process.env.BASE!']],
    run: async (unit) => {
      const token = 'docs-example-token'
      await running(unit, [process.execPath, join(ROOT, 'bin/edgeserve.js'), 'run', 'adder.ts', '--port', '0', '--rpc-token', token], async (base) => {
        expect((await script(unit, { BASE: base, TOKEN: token })).trim()).toBe('42')
      })
    },
  },
  'docs/deployments.md › Model composition': {
    runtime: 'node',
    fragment: {
      why: "the OCR pipeline's shape, shortened; examples/ocr/pipeline.ts is the one the OCR tests serve",
      wrap: (text) => `import { Hono } from 'hono'
import { deployment, ingress, type DeploymentHandle } from 'edgeserve'
type Box = [number, number][]
class TextDetector {
  async detect(page: ArrayBuffer): Promise<Box[]> { return [[[0, page.byteLength]]] }
}
class TextRecognizer {
  constructor(readonly options: { maxBatchSize?: number } = {}) {}
  async recognize(box: Box): Promise<string> { return String(box.length) }
}
const textDetector = deployment(TextDetector)
const textRecognizer = deployment(TextRecognizer)
const app = new Hono()
${text}`,
    },
  },
  'docs/models.md › Models (ONNX)': {
    runtime: 'node',
    assets: { 'model.onnx': HOUSE_PRICE_MODEL },
    run: served((base) => modelBurst(base, '/predict', 'prediction')),
  },
  'docs/models.md › A model to try': {
    runtime: 'node',
    files: { 'check-model.ts': CHECK_MODEL },
    run: async (unit) => {
      await script(unit)
      const answer = await script({ ...unit, main: 'check-model.ts' }, { HOUSES: JSON.stringify(HOUSES) })
      const prices = JSON.parse(answer.trim().split('\n').at(-1)!) as number[]
      // The file holds what the script says it writes: its weights times each house, plus its bias.
      const [weights, bias] = [/const WEIGHTS = (\[.*\])/, /const BIAS = (\S+)/].map((pattern) => JSON.parse(pattern.exec(unit.block.text)![1]!) as unknown)
      const expected = HOUSES.map((house) => house.reduce((sum, x, i) => sum + x * (weights as number[])[i]!, bias as number))
      expect(prices).toHaveLength(HOUSES.length)
      prices.forEach((price, i) => expect(price, `house ${i}`).toBeCloseTo(expected[i]!, 3))
    },
  },
  'docs/observability.md › The dashboard': {
    runtime: 'workers',
    fragment: {
      why: 'the two lines a Worker entry adds to serve the dashboard',
      wrap: (text) => `import { Hono } from 'hono'
import { serveWorker } from 'edgeserve/workers'
const app = new Hono()
${text}`,
    },
  },
  'docs/workers.md › Cloudflare Workers': { runtime: 'workers', excerptOf: 'examples/demo/worker.ts' },
  'docs/workers.md › A model cheaper than the hop': {
    runtime: 'workers',
    assets: { 'model.onnx': HOUSE_PRICE_MODEL },
    files: { 'onnx.d.ts': ONNX_MODULE_TYPES },
    run: inWorkerd((base) => modelBurst(base, '/predict', 'prediction')),
  },
}

// --- the scratch project ----------------------------------------------------

const blocks = documents().flatMap(docBlocks)
const code = blocks.filter(isCode)
const byId = new Map(blocks.map((block) => [block.id, block]))
let scratch: string
const units = new Map<string, Unit>()
const typeErrors = new Map<string, string[]>()

/** The block's program: the blocks it continues, then it, with the test's replacements. */
function programOf(block: DocBlock): string {
  const check = CHECKS[block.id]!
  const before = check.continues ? programOf(byId.get(check.continues)!) : ''
  let text = check.fragment ? check.fragment.wrap(block.text) : block.text
  for (const [from, to] of check.replace ?? []) {
    if (!text.includes(from)) throw new Error(`${block.id}: no "${from}" to replace`)
    text = text.replaceAll(from, to)
  }
  return before + text
}

function writeUnit(block: DocBlock, index: number): Unit {
  const check = CHECKS[block.id]!
  const dir = join(scratch, `${check.runtime}-${String(index).padStart(2, '0')}`)
  const { files, main } = filesFor(block, blocks)
  files.set(main, programOf(block))
  for (const part of code.filter((each) => CHECKS[each.id]?.partOf === block.id)) files.set(part.name!, part.text)
  for (const [name, text] of Object.entries(check.files ?? {})) files.set(name, text)
  for (const [name, text] of files) {
    mkdirSync(dirname(join(dir, name)), { recursive: true })
    writeFileSync(join(dir, name), text)
  }
  for (const [name, source] of Object.entries(check.assets ?? {})) {
    mkdirSync(dirname(join(dir, name)), { recursive: true })
    copyFileSync(join(ROOT, source), join(dir, name))
  }
  return { block, dir, main }
}

function tsconfig(runtime: Runtime, include: string[]): string {
  const compilerOptions = {
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    target: 'es2022',
    lib: ['es2023'],
    module: 'esnext',
    moduleResolution: 'bundler',
    moduleDetection: 'force',
    customConditions: runtime === 'node' ? ['edgeserve-source'] : ['edgeserve-source', 'workerd', 'worker'],
    types: [runtime === 'node' ? 'node' : '@cloudflare/workers-types'],
    allowImportingTsExtensions: true,
    noEmit: true,
    skipLibCheck: true,
  }
  return `${JSON.stringify({ compilerOptions, include }, null, 2)}\n`
}

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'edgeserve-docs-'))
  // The project's packages are the repository's, and its 'edgeserve' is the repository itself.
  mkdirSync(join(scratch, 'node_modules'))
  for (const name of readdirSync(join(ROOT, 'node_modules'))) {
    if (!name.startsWith('.')) symlinkSync(join(ROOT, 'node_modules', name), join(scratch, 'node_modules', name))
  }
  symlinkSync(ROOT, join(scratch, 'node_modules/edgeserve'))
  writeFileSync(join(scratch, 'package.json'), '{ "private": true, "type": "module" }\n')
  code.forEach((block, i) => {
    if (CHECKS[block.id] && !CHECKS[block.id]!.excerptOf && !CHECKS[block.id]!.partOf) units.set(block.id, writeUnit(block, i))
  })
  for (const runtime of ['node', 'workers'] as const) {
    const mine = [...units.values()].filter((unit) => CHECKS[unit.block.id]!.runtime === runtime && /\.ts$/.test(unit.main))
    const include = mine.flatMap((unit) => [`${unit.dir.slice(scratch.length + 1)}/${unit.main}`, `${unit.dir.slice(scratch.length + 1)}/*.d.ts`])
    writeFileSync(join(scratch, `tsconfig.${runtime}.json`), tsconfig(runtime, include))
    const result = await exec(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', `tsconfig.${runtime}.json`], {
      cwd: scratch,
      timeout: 180_000,
    }).catch((failed: { stdout?: string }) => ({ stdout: failed.stdout ?? '' }))
    // Errors in the docs' files only: the repository's own sources are checked by `npm run typecheck`, under its settings.
    for (const line of result.stdout.split('\n')) {
      const unit = mine.find((each) => line.startsWith(`${each.dir.slice(scratch.length + 1)}/`))
      if (unit) typeErrors.set(unit.block.id, [...(typeErrors.get(unit.block.id) ?? []), line])
    }
  }
}, 300_000)

afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true })
})

describe('the code blocks of README.md and docs/*.md', () => {
  it('every block has a check, and every check a block', () => {
    expect(code.map((block) => block.id).filter((id) => !CHECKS[id])).toEqual([])
    expect(Object.keys(CHECKS).filter((id) => !code.some((block) => block.id === id))).toEqual([])
  })

  it('fragments are few, and each says why it cannot run', () => {
    const fragments = Object.entries(CHECKS).filter(([, check]) => check.fragment)
    for (const [, check] of fragments) expect(check.fragment!.why.length).toBeGreaterThan(20)
    expect(fragments.length).toBeLessThanOrEqual(7)
  })

  for (const block of code) {
    const check = CHECKS[block.id]
    if (!check) continue
    const where = `${block.doc}:${block.line}`
    if (check.excerptOf) {
      it(`${block.id} (${where}) is ${check.excerptOf}, line for line`, () => {
        const lines = readFileSync(join(ROOT, check.excerptOf!), 'utf8').split('\n')
        let at = 0
        const missing: string[] = []
        for (const line of block.text.split('\n').filter((each) => each.trim() !== '')) {
          const found = lines.indexOf(line, at)
          if (found < 0) missing.push(line)
          else at = found + 1
        }
        expect(missing).toEqual([])
      })
      continue
    }
    if (check.partOf) continue
    const typed = /\.ts$/.test(filesFor(block, blocks).main)
    it(`${block.id} (${where}): ${[typed && `type-checks on ${check.runtime === 'node' ? 'Node' : 'Workers'}`, check.run && 'runs'].filter(Boolean).join(', and ')}`, async () => {
      expect(typeErrors.get(block.id) ?? []).toEqual([])
      await check.run?.(units.get(block.id)!)
    }, 120_000)
  }
})
