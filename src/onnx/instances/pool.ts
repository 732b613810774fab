/**
 * A model held as several instances on Node worker threads (`loadModel`'s
 * `instances`), as Triton holds a model as instances: each thread has its
 * own onnxruntime (web or node) runtime, session and thread pool, and a run is cut
 * along its batch axis into one slice per idle instance (./instance.mjs runs
 * a slice), which run side by side; the outputs are joined back in order. A
 * run that finds every instance busy runs whole on one (see run()).
 *
 * Why not ORT's own threads: they wait for each other at every step of the
 * model, so one of them losing its core for a moment holds the other up,
 * and on a server the cores are shared with HTTP, the garbage collector and
 * the rest. Instances meet once a run, not once a step. And
 * the run leaves the caller's thread free: served in process, the server
 * reads HTTP and prepares the next batch while the model runs.
 */
import { Worker } from 'node:worker_threads'
import type { InferenceSession, Tensor } from 'onnxruntime-web'
import { batchSizeOf, joinOutputs, shares, sliceFeeds, type WireFeeds } from '../batch-axis.js'
import type { ModelSession, OrtRuntime, Provider } from '../platform.js'

type TensorClass = typeof import('onnxruntime-web').Tensor

const INSTANCE = new URL('./instance.mjs', import.meta.url)

export interface InstancePoolOptions {
  count: number
  /** The package each instance imports to run its session. */
  runtime: OrtRuntime
  /** ORT threads of each instance. */
  numThreads: number
  /** Tried in order in each instance; the first that creates a session is used. */
  providers: Provider[]
  /** Passed to `InferenceSession.create` with the provider. */
  sessionOptions: InferenceSession.SessionOptions
  Tensor: TensorClass
}

/** What an instance says once its session exists. */
interface Ready {
  provider: Provider
  numThreads: number
  inputNames: string[]
  outputNames: string[]
  inputMetadata: InferenceSession.ValueMetadata[]
  outputMetadata: InferenceSession.ValueMetadata[]
}

interface Pending {
  resolve(outputs: WireFeeds): void
  reject(error: Error): void
}

type Reply =
  | { ready: Ready }
  | { failed: { name: string; message: string } }
  | { id: number; outputs: WireFeeds }
  | { id: number; error: { name: string; message: string } }

function errorFrom(wire: { name: string; message: string }): Error {
  const error = new Error(wire.message)
  error.name = wire.name
  return error
}

/** One worker thread with one session. It starts again on the next run if its thread stops. */
class Instance {
  private worker: Worker | undefined
  private started: Promise<Ready> | undefined
  private readonly pending = new Map<number, Pending>()
  private nextId = 0
  private released = false

  /** Slices given to run() and not yet answered, counted from the call (the send waits for the thread to start). */
  running = 0

  constructor(
    private readonly index: number,
    private readonly bytes: Uint8Array,
    private readonly options: InstancePoolOptions,
  ) {}

  start(): Promise<Ready> {
    if (this.released) return Promise.reject(new Error('the model was released: load it again to run it'))
    return (this.started ??= new Promise<Ready>((resolve, reject) => {
      const { runtime, numThreads, providers, sessionOptions } = this.options
      const worker = new Worker(INSTANCE, {
        workerData: { runtime, bytes: this.bytes, numThreads, providers, sessionOptions },
        name: `edgeserve model instance ${this.index}`,
      })
      this.worker = worker
      let lastError: Error | undefined
      worker.on('message', (reply: Reply) => {
        if ('ready' in reply) {
          // A thread that is loading the model, or running a slice, keeps
          // the process alive; an idle one does not (see run() and settle()).
          if (this.pending.size === 0) worker.unref()
          resolve(reply.ready)
        } else if ('failed' in reply) {
          reject(errorFrom(reply.failed))
          void worker.terminate()
        } else this.settle(reply)
      })
      worker.on('error', (error) => {
        lastError = error
      })
      worker.on('exit', (code) => {
        if (this.worker === worker) {
          this.worker = undefined
          this.started = undefined
        }
        const stopped = new Error(
          `the model's instance ${this.index} on a worker thread stopped (exit code ${code})${lastError ? `: ${lastError.message}` : ''}`,
          { cause: lastError },
        )
        reject(stopped) // no-op once it was ready
        for (const pending of this.pending.values()) pending.reject(stopped)
        this.pending.clear()
      })
    }))
  }

  /** Run one slice; slices sent while another runs wait their turn in the instance. */
  async run(feeds: WireFeeds): Promise<WireFeeds> {
    this.running++
    try {
      return await this.send(feeds)
    } finally {
      this.running--
    }
  }

  private async send(feeds: WireFeeds): Promise<WireFeeds> {
    await this.start()
    const worker = this.worker
    // The thread stopped after it was ready, before this slice was sent: start it again.
    if (worker === undefined) return this.send(feeds)
    const id = this.nextId++
    const transfer = Object.values(feeds).flatMap(({ data }) => (Array.isArray(data) ? [] : [data.buffer as ArrayBuffer]))
    return new Promise<WireFeeds>((resolve, reject) => {
      if (this.pending.size === 0) worker.ref()
      this.pending.set(id, { resolve, reject })
      worker.postMessage({ id, feeds }, transfer)
    })
  }

  private settle(reply: { id: number } & ({ outputs: WireFeeds } | { error: { name: string; message: string } })): void {
    const pending = this.pending.get(reply.id)
    if (!pending) return
    this.pending.delete(reply.id)
    if (this.pending.size === 0) this.worker?.unref()
    if ('outputs' in reply) pending.resolve(reply.outputs)
    else pending.reject(errorFrom(reply.error))
  }

  async stop(): Promise<void> {
    this.released = true
    if (this.worker) await this.worker.terminate()
  }
}

/** A model's instances, as one session. */
export class InstancePool implements ModelSession {
  private constructor(
    private readonly instances: Instance[],
    private readonly Tensor: TensorClass,
    private readonly ready: Ready,
  ) {}

  get inputNames(): readonly string[] {
    return this.ready.inputNames
  }
  get outputNames(): readonly string[] {
    return this.ready.outputNames
  }
  get inputMetadata(): readonly InferenceSession.ValueMetadata[] {
    return this.ready.inputMetadata
  }
  get outputMetadata(): readonly InferenceSession.ValueMetadata[] {
    return this.ready.outputMetadata
  }
  /** The provider every instance runs on. */
  get provider(): Provider {
    return this.ready.provider
  }
  /** ORT threads of each instance. */
  get numThreads(): number {
    return this.ready.numThreads
  }

  /** Start `options.count` instances of the model; fails as the first instance that cannot load it. */
  static async start(bytes: Uint8Array, options: InstancePoolOptions): Promise<InstancePool> {
    const instances = Array.from({ length: options.count }, (_, i) => new Instance(i, bytes, options))
    const started = await Promise.allSettled(instances.map((instance) => instance.start()))
    const failure = started.find((result) => result.status === 'rejected')
    if (failure) {
      await Promise.all(instances.map((instance) => instance.stop()))
      throw failure.reason
    }
    return new InstancePool(instances, options.Tensor, (started[0] as PromiseFulfilledResult<Ready>).value)
  }

  /**
   * Run the feeds' batch on the instances that are idle, cut into one slice
   * each (a batch of one runs on one of them), so that a run alone uses
   * every core. A run that finds none idle goes whole to the instance with
   * the fewest runs before it, where it waits its turn: with as many batches
   * in flight as instances (`setMaxConcurrentBatches(model.instances)`),
   * each instance runs whole batches, as Triton runs one on each instance of
   * a model, and no instance waits for another's half of a batch.
   */
  async run(feeds: Record<string, Tensor>): Promise<Record<string, Tensor>> {
    const wire: WireFeeds = {}
    for (const [name, tensor] of Object.entries(feeds)) wire[name] = { type: tensor.type, dims: tensor.dims, data: tensor.data }
    const n = batchSizeOf(wire)
    const idle = this.instances.filter((instance) => instance.running === 0)
    const on = idle.length > 0 ? idle : [this.instances.reduce((a, b) => (b.running < a.running ? b : a))]
    const slices = sliceFeeds(wire, n, shares(n, on.length))
    const results = await Promise.all(slices.map((slice, i) => on[i]!.run(slice)))
    const joined = joinOutputs(results)
    const outputs: Record<string, Tensor> = {}
    // onnxruntime's Tensor constructor is typed as one overload per element type; the joined outputs' type and
    // data came from its own tensors, so they match at run time, which no single overload can say.
    const TensorClass = this.Tensor as unknown as new (type: string, data: unknown, dims: readonly number[]) => Tensor
    for (const [name, { type, data, dims }] of Object.entries(joined)) outputs[name] = new TensorClass(type, data, dims)
    return outputs
  }

  async release(): Promise<void> {
    await Promise.all(this.instances.map((instance) => instance.stop()))
  }
}
