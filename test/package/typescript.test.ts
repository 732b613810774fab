/**
 * The package's declarations in strict TypeScript projects: `strict`,
 * `exactOptionalPropertyTypes`, `skipLibCheck: false`, `nodenext`, and no DOM
 * library, once with Node's types and once with Cloudflare's. The README's
 * TypeScript examples are checked word for word, and the call sites of its
 * other examples (readme-calls.ts below) need no cast.
 *
 * Each project is checked by the repository's pinned TypeScript and again by
 * TypeScript 7 (TYPESCRIPT_7), which the README's unpinned `npm install -D
 * typescript` installs today.
 *
 * onnxruntime-web's own declarations name DOM types (ImageData,
 * WebGLTexture), so with `skipLibCheck: false` and no DOM they fail on their
 * own; the projects that use edgeserve/onnx are held to "no error outside
 * onnxruntime's declarations", the others to no error at all.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from '../support/spawn-server.js'
import { createProject, pinnedVersion, readmeInstallFiles, run, startIn, type Project } from './lib/consumer.js'

function tsconfig(types: string, include: string[]): string {
  const compilerOptions = {
    strict: true,
    exactOptionalPropertyTypes: true,
    skipLibCheck: false,
    module: 'nodenext',
    moduleResolution: 'nodenext',
    target: 'es2022',
    lib: ['es2022'],
    types: [types],
    noEmit: true,
  }
  return `${JSON.stringify({ compilerOptions, include }, null, 2)}\n`
}

/**
 * TypeScript 7, the native compiler, installed beside the pinned TypeScript
 * under this name: what the README's unpinned `npm install -D typescript`
 * installs today, at one release so that a check is the same from run to run.
 */
const TYPESCRIPT_7 = 'typescript-7'
const TYPESCRIPT_7_PACKAGE = `${TYPESCRIPT_7}@npm:typescript@7.0.2`
/** The packages whose tsc checks each project: the pinned TypeScript, then TypeScript 7. */
const COMPILERS = ['typescript', TYPESCRIPT_7]

/** Where onnxruntime-web's declarations sit (their DOM names are theirs, not ours). */
const ONNXRUNTIME_DECLARATIONS = /^node_modules\/onnxruntime-(web|common)\//

/** tsc's errors, by file: `{ file, line }`; `compiler` is the package whose tsc runs. */
async function typeCheck(project: Project, config: string, compiler: string): Promise<{ errors: string[]; files: string[] }> {
  const result = await run(process.execPath, [`node_modules/${compiler}/bin/tsc`, '-p', config], project.dir, 120_000)
  const errors = result.stdout.split('\n').filter((line) => /^\S+\(\d+,\d+\): error/.test(line))
  if (result.code !== 0 && errors.length === 0) throw new Error(`tsc -p ${config} failed:\n${result.stdout}\n${result.stderr}`)
  return { errors, files: [...new Set(errors.map((line) => line.slice(0, line.indexOf('('))))] }
}

/** Call sites of the README's examples outside its Install section, on Node. */
const README_CALLS = `import { Hono } from 'hono'
import { batch, deployment, endOfStream, getHandle, HTTPError, ingress, readJson } from 'edgeserve'
import { getDeploymentHandle, serve } from 'edgeserve/node'
import { connect } from 'edgeserve/client'

class BatchAdder {
  handleBatch = batch(
    async (numbers: number[]) => {
      console.log(\`Our input array has shape: (\${numbers.length},)\`)
      return numbers.map((n) => n + 1)
    },
    { maxBatchSize: 4 },
  )

  async fetch(request: Request) {
    const n = Number(new URL(request.url).searchParams.get('number'))
    if (!Number.isSafeInteger(n)) throw new HTTPError(400, 'number must be an integer')
    return String(await this.handleBatch(n))
  }
}

const direct = new BatchAdder()
const sums: number[] = await Promise.all([0, 1, 2, 3, 4, 5, 6, 7, 8].map((n) => direct.handleBatch(n)))
direct.handleBatch.setMaxBatchSize(8)
direct.handleBatch.setBatchWaitTimeoutS(0.01)
const queued: number = direct.handleBatch.stats().queueLength
const controller = new AbortController()
await direct.handleBatch(1, { signal: controller.signal, deadline: Date.now() + 1000 })

class DecoratedAdder {
  @batch({ maxBatchSize: 4 })
  async handleBatch(numbers: number[]): Promise<number[]> {
    return numbers.map((n) => n + 1)
  }

  async add(n: number) {
    const [sum] = await this.handleBatch([n])
    return sum
  }
}

class Generator {
  generateTokens = batch.continuous(async (prompts: string[]) => prompts.map((p) => (p.length > 3 ? endOfStream : p + '.')), { maxBatchSize: 4 })

  async *stream(text: string): AsyncIterableIterator<string> {
    yield* this.generateTokens(text)
  }
}

export const adder = deployment(BatchAdder, { numReplicas: 2, requestTimeoutS: 5 })
const textGenerator = deployment(Generator)
const app = new Hono()
  .get('/adder', ingress(adder))
  .get('/decorated', ingress(deployment(DecoratedAdder)))
  .post('/json', async (c) => c.json({ body: await readJson(c.req.raw) }))
  .get('/handle', async (c) => {
    const handle = getHandle(adder, c.env)
    const sum: number = await handle.handleBatch.remote(41)
    const idempotent = getHandle(adder, c.env, { idempotent: true })
    for await (const token of getHandle(textGenerator, c.env).stream.remote('Once upon a time')) process.stdout.write(token)
    return c.text(String(sum + (await idempotent.handleBatch.remote(1))))
  })

const server = await serve(app, { port: 0, hostname: '127.0.0.1', name: 'My-App', rpcToken: 'token', logLevel: 'debug', threads: { module: import.meta.url } })
const byName = getDeploymentHandle<BatchAdder>('BatchAdder', { app: 'My-App' })
const response = byName.handleBatch.remote(1)
const one: number = await response.result({ timeoutS: 2 })
byName.handleBatch.remote(2).cancel()
const remote = connect(server.url, { token: 'token' }).getDeploymentHandle<BatchAdder>('BatchAdder')
const fortyTwo: number = await remote.handleBatch.remote(41)
console.log(sums, queued, one, fortyTwo, server.port, server.hostname)
await server.close()
`

/** The model API's call sites on Node, beside the README's model app: readJson, pad, stackInt64, Tensor and loadModel's options. */
const README_ONNX = `import { Hono } from 'hono'
import { batch, deployment, ingress, readJson } from 'edgeserve'
import { loadModel, pad, split, stack, stackInt64, Tensor } from 'edgeserve/onnx'

class Classifier {
  model = loadModel('model.onnx')

  classify = batch(async (rows: number[][]) => {
    const model = await this.model
    const out = await model.run({ [model.inputNames[0]!]: stack(rows, [8]) })
    const scores = out[model.outputNames[0]!]!.data
    return rows.map((_, i) => Number(scores[i]))
  }, { maxBatchSize: 32 })

  async fetch(request: Request) {
    const { features } = (await readJson(request)) as { features: number[] }
    return { score: await this.classify(features) }
  }
}

const app = new Hono()
app.post('/classify', ingress(deployment(Classifier)))

const model = await loadModel(new Uint8Array(0), { executionProviders: ['webgpu', 'wasm'], numThreads: 1, instances: 'auto' })
const padded = pad([[1, 2], [3]], { to: [4, 8] })
const ids: Tensor = stackInt64([[1, 2]], 2)
const instances: number = model.instances
console.log(model.provider, instances, model.inputs[0]?.shape, padded.mask.dims, split(padded.tensor).length, ids.type, new Tensor('float32', [1], [1]).dims)
`

/** A Worker without a model, for Cloudflare's types: the dashboard page and a subclass that adds an RPC method. */
const PLAIN_WORKER = `import { Hono } from 'hono'
import { batch, deployment, getHandle, ingress } from 'edgeserve'
import { dashboard } from 'edgeserve/dashboard'
import { durableObject, serveWorker } from 'edgeserve/workers'

interface Env {
  BatchAdder: DurableObjectNamespace
  GREETING: string
}

class BatchAdder {
  handleBatch = batch(async (numbers: number[]) => numbers.map((n) => n + 1), { maxBatchSize: 4 })

  async fetch(request: Request) {
    return String(await this.handleBatch(Number(new URL(request.url).searchParams.get('number'))))
  }
}

const adder = deployment(BatchAdder)
const app = new Hono<{ Bindings: Env }>()
  .get('/adder', ingress(adder))
  .get('/hello', (c) => c.text(c.env.GREETING))
  .get('/handle', async (c) => c.text(String(await getHandle(adder, c.env).handleBatch.remote(41))))

export default serveWorker(app, { dashboard, deployments: [adder] }) satisfies ExportedHandler<Env>

/** Resets its object, as an eviction would: an RPC method of the user's own. */
export class BatchAdderObject extends durableObject(adder) {
  async reset(reason: string): Promise<void> {
    this.ctx.abort(reason)
  }
}
`

/** An app whose deployment can run on worker threads: each thread imports its module to find the class. */
const THREADS_APP = `import { Hono } from 'hono'
import { batch, deployment, ingress } from 'edgeserve'

class Doubler {
  double = batch(async (xs: number[]) => xs.map((x) => x * 2), { maxBatchSize: 8 })

  async fetch(request: Request): Promise<string> {
    return String(await this.double(Number(new URL(request.url).searchParams.get('x'))))
  }
}

export const app = new Hono().get('/double', ingress(deployment(Doubler)))
`

/** The same app served from its own module, replicas on worker threads, as \`node --import tsx\` or \`npx tsx\` runs it. */
const THREADS_SERVER = `${THREADS_APP}
import { serve } from 'edgeserve/node'

const server = await serve(app, { port: 0, hostname: '127.0.0.1', threads: { module: import.meta.url } })
console.log(\`listening on \${server.url}\`)
`

/** A model held as two instances on worker threads, from the installed package, beside the same model in this thread. */
const INSTANCES_SCRIPT = `import { loadModel, stack } from 'edgeserve/onnx'
const rows = [
  [8.3, 41, 6.98, 1.02, 322, 2.55, 37.88, -122.23],
  [1.5, 20, 4.1, 1.1, 1200, 3.2, 34.05, -118.24],
  [3.1, 12, 5.0, 1.0, 800, 2.9, 36.1, -119.7],
]
const here = await loadModel('model.onnx', { numThreads: 1 })
const held = await loadModel('model.onnx', { instances: 2 })
const feeds = { [held.inputNames[0]!]: stack(rows, [8]) }
const [a, b] = [await here.run(feeds), await held.run(feeds)]
const prices = (out: typeof a) => Array.from(out[held.outputNames[0]!]!.data as Float32Array)
console.log(JSON.stringify({ instances: held.instances, here: prices(a), held: prices(b) }))
`

/** A user's type error (a string where a number goes): a live check finds it in this file and nowhere else. */
const WRONG_OPTION = "import { batch } from 'edgeserve'\nexport const f = batch(async (xs: number[]) => xs.map(String), { maxBatchSize: '4' })\n"

/** A Worker whose fetch wants an env that Env is not: one error, on line 5. */
const WRONG_ENV = `import { Hono } from 'hono'
import { serveWorker } from 'edgeserve/workers'
interface Env { KEY: string }
export default serveWorker(new Hono()) satisfies ExportedHandler<Env>
export const wrong = { fetch: (_request: Request, env: { OTHER: number }) => new Response(String(env.OTHER)) } satisfies ExportedHandler<Env>
`

describe('TypeScript on Node (types: ["node"])', () => {
  let project: Project

  beforeAll(async () => {
    project = await createProject(
      'typescript-node',
      ['hono', pinnedVersion('onnxruntime-web'), pinnedVersion('typescript'), TYPESCRIPT_7_PACKAGE, pinnedVersion('@types/node'), pinnedVersion('tsx')],
      {
        ...readmeInstallFiles('Node, in TypeScript'),
        'readme-calls.ts': README_CALLS,
        'readme-onnx.ts': README_ONNX,
        // The README's model app, word for word (node-model.test.ts serves it).
        'readme-model-app.ts': readmeInstallFiles('Node, in TypeScript, with a model')['app.ts']!,
        'tsconfig.json': tsconfig('node', ['server.ts', 'readme-calls.ts']),
        'tsconfig.onnx.json': tsconfig('node', ['readme-onnx.ts', 'readme-model-app.ts']),
        'wrong.ts': WRONG_OPTION,
        'tsconfig.wrong.json': tsconfig('node', ['wrong.ts']),
      },
    )
  })

  describe.each(COMPILERS)('by %s', (compiler) => {
    it('checks the README examples without a single error', async () => {
      const { errors } = await typeCheck(project, 'tsconfig.json', compiler)
      expect(errors).toEqual([])
    })

    it('checks edgeserve/onnx with errors only in onnxruntime-web’s own declarations', async () => {
      const { files } = await typeCheck(project, 'tsconfig.onnx.json', compiler)
      expect(files.filter((file) => !ONNXRUNTIME_DECLARATIONS.test(file))).toEqual([])
    })

    it('a type error in the user’s code is still found (the check is live)', async () => {
      const { files } = await typeCheck(project, 'tsconfig.wrong.json', compiler)
      expect(files).toEqual(['wrong.ts'])
    })
  })

  it('runs a model as instances on worker threads from the installed package, as the model in this thread answers', async () => {
    project.write({ 'model.onnx': readFileSync(join(ROOT, 'examples/house-price/model/house-price.onnx')), 'instances.ts': INSTANCES_SCRIPT })
    const result = await run('npx', ['--no', 'tsx', 'instances.ts'], project.dir)
    expect(result.code).toBe(0)
    const answer = JSON.parse(result.stdout.trim().split('\n').at(-1)!) as { instances: number; here: number[]; held: number[] }
    expect(answer.instances).toBe(2)
    expect(answer.held).toHaveLength(3)
    answer.held.forEach((price, i) => expect(price).toBeCloseTo(answer.here[i]!, 5))
  })

  for (const [how, argv] of [
    ['node --import tsx', [process.execPath, '--import', 'tsx', 'threads-server.ts']],
    ['npx tsx', ['npx', '--no', 'tsx', 'threads-server.ts']],
  ] as const) {
    it(`\`${how}\` runs a TypeScript server whose replicas are on worker threads`, async () => {
      project.write({ 'threads-server.ts': THREADS_SERVER })
      const server = await startIn(project, [...argv], /listening on (http:\/\/127\.0\.0\.1:\d+)/)
      try {
        const doubled = await Promise.all([1, 2, 3].map(async (x) => (await fetch(`${server.match[1]!}/double?x=${x}`)).text()))
        expect(doubled).toEqual(['2', '4', '6'])
      } finally {
        await server.stop()
      }
    })
  }

  it('`npx edgeserve run` loads a TypeScript app through the project’s tsx, in worker threads too', async () => {
    project.write({ 'threads-app.ts': THREADS_APP })
    const server = await startIn(project, ['npx', '--no', 'edgeserve', 'run', 'threads-app.ts:app', '--port', '0', '--threads'], /listening on (http:\/\/\S+)/)
    try {
      const base = server.match[1]!
      expect(await (await fetch(`${base}/double?x=1`)).text()).toBe('2')
      const health = (await (await fetch(`${base}/-/healthz`)).json()) as { status: string }
      expect(health.status).toBe('ok')
    } finally {
      await server.stop()
    }
  })
})

describe('TypeScript on Workers (types: ["@cloudflare/workers-types"])', () => {
  let project: Project

  beforeAll(async () => {
    project = await createProject(
      'typescript-workers',
      ['hono', pinnedVersion('onnxruntime-web'), pinnedVersion('typescript'), TYPESCRIPT_7_PACKAGE, pinnedVersion('@cloudflare/workers-types')],
      {
        // worker.ts, onnx.d.ts and the README's own tsconfig.json
        ...readmeInstallFiles('Workers, in TypeScript, with a model'),
        'plain-worker.ts': PLAIN_WORKER,
        'tsconfig.plain.json': tsconfig('@cloudflare/workers-types', ['plain-worker.ts']),
        'tsconfig.model.json': tsconfig('@cloudflare/workers-types', ['worker.ts', 'onnx.d.ts']),
        'wrong-env.ts': WRONG_ENV,
        'tsconfig.wrong.json': tsconfig('@cloudflare/workers-types', ['wrong-env.ts']),
      },
    )
  })

  describe.each(COMPILERS)('by %s', (compiler) => {
    it('checks a Worker with `satisfies ExportedHandler<Env>` and a Durable Object subclass without a single error', async () => {
      const { errors } = await typeCheck(project, 'tsconfig.plain.json', compiler)
      expect(errors).toEqual([])
    })

    it('checks the README’s model Worker under the README’s own tsconfig without a single error', async () => {
      const { errors } = await typeCheck(project, 'tsconfig.json', compiler)
      expect(errors).toEqual([])
    })

    it('checks the README’s model Worker with errors only in onnxruntime-web’s own declarations', async () => {
      const { files } = await typeCheck(project, 'tsconfig.model.json', compiler)
      expect(files.filter((file) => !ONNXRUNTIME_DECLARATIONS.test(file))).toEqual([])
    })

    it('rejects a Worker whose fetch wants an env that Env is not', async () => {
      const { errors } = await typeCheck(project, 'tsconfig.wrong.json', compiler)
      expect(errors).toHaveLength(1)
      expect(errors[0]).toMatch(/^wrong-env\.ts\(5,/)
    })
  })
})
