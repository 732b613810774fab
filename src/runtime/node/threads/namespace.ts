import { fileURLToPath, pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import type { Deployment } from '../../../deployment/deployment.js'
import { replicaIndexOf, type ReplicaNamespace, type ReplicaStub } from '../../../deployment/namespace.js'
import type { Outcome } from '../../../deployment/outcome.js'
import type { CallMeta, ReplicaDescription, ReplicaHealth } from '../../../deployment/replica.js'
import { EdgeServeError, ReplicaUnavailableError } from '../../../errors.js'
import type { AdminReplica } from '../../../http/admin.js'
import type { MetricsSnapshot } from '../../../metrics/registry.js'
import type { AdminQuery, FromWorker, ThreadWorkerData, ToWorker } from './protocol.js'

/**
 * `serve(app, { threads })`: run replicas on worker threads.
 *
 * Each replica of each chosen deployment gets its own `worker_threads`
 * Worker, so a CPU-bound model (one `session.run` at a time per replica) uses
 * as many cores as there are replicas, and the server thread keeps only HTTP
 * parsing and routing. A deployment with `numReplicas: 1` still moves off the
 * server thread.
 *
 * A worker cannot receive a class or a closure, so it imports `module` itself
 * and finds the deployment there by name: an exported deployment, an exported
 * Hono app that routes to it, or the app that module passes to `serve()` at
 * top level (that serve() call never returns inside the worker, so a file
 * may both export its app and serve it: `threads: { module: import.meta.url }`).
 * `edgeserve run file.ts --threads` passes the file for you.
 */
export interface ThreadsOption {
  /** URL (or path) of the module that exports the app, or that calls serve() with it: usually `import.meta.url`. */
  module: string | URL
  /** Names of the deployments to run on threads; default every deployment served. The rest stay in-process. */
  deployments?: readonly string[]
}

/** The part of `serve({ env })` a worker can receive: structured-cloneable values. Functions and bindings stay behind. */
function cloneableEnv(env: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(env ?? {})) {
    if (typeof value === 'object' && value !== null && Object.getPrototypeOf(value) !== Object.prototype && !Array.isArray(value)) continue
    try {
      out[key] = structuredClone(value)
    } catch {
      // not cloneable: not visible to thread replicas
    }
  }
  return out
}

export function moduleUrl(module: string | URL): string {
  const text = String(module)
  return /^[a-z][a-z0-9+.-]*:/i.test(text) && !/^[a-z]:[\\/]/i.test(text) ? text : pathToFileURL(text).href
}

const BOOTSTRAP = new URL('./bootstrap.mjs', import.meta.url)

/**
 * Workers do not inherit the module hooks of the tsx CLI (it registers them
 * in its own preflight, not through execArgv), so each worker registers tsx
 * itself, except when the process was started with `--import tsx` (then the
 * worker's inherited execArgv does it).
 */
const hasTsx = () => process.execArgv.some((arg, i, all) => /^--(import|loader)(=tsx|$)/.test(arg) && (arg.endsWith('=tsx') || all[i + 1] === 'tsx'))

/**
 * Thread replicas behind the shape of a `DurableObjectNamespace`, like
 * `LocalNamespace`: `idFromName`, and `get(id)` giving a stub whose `fetch`
 * and `invoke` post messages to the replica's worker.
 */
export class ThreadNamespace implements ReplicaNamespace {
  readonly replicas: ThreadReplica[]
  /**
   * Stubs are used as they are (no Durable Object reset handling): the
   * client's abort signal is forwarded to the worker by the stub itself.
   */
  readonly local = true

  constructor(
    readonly deployment: Deployment,
    threads: ThreadsOption,
    env?: Record<string, unknown>,
  ) {
    const base = { module: moduleUrl(threads.module), deployment: deployment.name, env: cloneableEnv(env), registerTsx: !hasTsx() }
    this.replicas = Array.from({ length: deployment.options.numReplicas }, (_, i) => new ThreadReplica({ ...base, replica: i, edgeserveReplicaThread: true }))
  }

  idFromName(name: string): string {
    return name
  }

  get(id: string): ReplicaStub {
    const replica = this.replicas[replicaIndexOf(this.deployment, id)]!
    return replica
  }

  /** Start every worker; rejects if one cannot find its deployment. */
  async start(): Promise<void> {
    await Promise.all(this.replicas.map((replica) => replica.start()))
  }

  async close(): Promise<void> {
    await Promise.all(this.replicas.map((replica) => replica.terminate()))
  }
}

interface Pending {
  resolve(value: never): void
  reject(error: Error): void
  /** Streamed response bodies. */
  stream?: ReadableStreamDefaultController<Uint8Array>
  done?(): void
}

/** One replica on its own worker thread; also its stub and its admin view. */
export class ThreadReplica implements ReplicaStub, AdminReplica {
  private worker: Worker | undefined
  private ready: Promise<void> | undefined
  private readonly pending = new Map<number, Pending>()
  private nextId = 1
  private closed = false

  constructor(private readonly data: ThreadWorkerData) {}

  get threadId(): number | undefined {
    return this.worker?.threadId
  }

  /** Spawn the worker (again, after a crash) and wait until it hosts the replica. */
  start(): Promise<void> {
    if (this.closed) return Promise.reject(new ReplicaUnavailableError('the server is shutting down'))
    return (this.ready ??= new Promise<void>((resolve, reject) => {
      const worker = new Worker(fileURLToPath(BOOTSTRAP), { workerData: this.data, name: `${this.data.deployment}/${this.data.replica}` })
      this.worker = worker
      worker.on('message', (message: FromWorker) => {
        if (message.type === 'ready') resolve()
        else if (message.type === 'failed') {
          const error = new Error(`replica ${this.data.deployment}/${this.data.replica} could not start in its thread: ${message.message}`)
          reject(error)
          void worker.terminate()
        } else this.receive(message)
      })
      worker.on('error', (error) => {
        reject(error)
        this.lost(worker, error)
      })
      worker.on('exit', (code) => {
        reject(new Error(`the thread of replica ${this.data.deployment}/${this.data.replica} exited with code ${code}`))
        this.lost(worker, new Error(`exit code ${code}`))
      })
    }))
  }

  /** The worker is gone: fail what it held; the next request starts a new one. */
  private lost(worker: Worker, cause: Error): void {
    if (this.worker !== worker) return
    this.worker = undefined
    this.ready = undefined
    const error = new ReplicaUnavailableError(
      `replica ${this.data.deployment}/${this.data.replica} stopped while serving this request (its thread ended)`,
      { cause },
    )
    for (const [id, pending] of this.pending) {
      this.pending.delete(id)
      pending.stream?.error(error)
      pending.reject(error)
      pending.done?.()
    }
  }

  private receive(message: Exclude<FromWorker, { type: 'ready' | 'failed' }>): void {
    const pending = this.pending.get(message.id)
    if (!pending) return
    switch (message.type) {
      case 'response':
        this.pending.delete(message.id)
        pending.done?.()
        pending.resolve(
          new Response(message.body, { status: message.status, statusText: message.statusText, headers: message.headers }) as never,
        )
        return
      case 'head': {
        const body = new ReadableStream<Uint8Array>({
          start: (controller) => {
            pending.stream = controller
          },
          cancel: () => {
            // The client went away mid-stream.
            this.pending.delete(message.id)
            pending.done?.()
            this.post({ type: 'abort', id: message.id })
          },
        })
        pending.resolve(new Response(body, { status: message.status, statusText: message.statusText, headers: message.headers }) as never)
        return
      }
      case 'chunk':
        pending.stream?.enqueue(new Uint8Array(message.bytes))
        return
      case 'end':
        this.pending.delete(message.id)
        pending.done?.()
        if (message.error) pending.stream?.error(new Error(message.error))
        else pending.stream?.close()
        return
      case 'outcome':
        this.pending.delete(message.id)
        pending.done?.()
        pending.resolve(message.outcome as never)
        return
      case 'admin':
        this.pending.delete(message.id)
        pending.resolve(message.value as never)
    }
  }

  private post(message: ToWorker, transfer: ArrayBuffer[] = []): void {
    this.worker?.postMessage(message, transfer)
  }

  /** Send `message` (built for a fresh id) and wait for its answer; `signal` aborting posts an abort. */
  private async request<R>(build: (id: number) => ToWorker, transfer: ArrayBuffer[], signal?: AbortSignal): Promise<R> {
    if (!this.ready || !this.worker) await this.start()
    else await this.ready
    const id = this.nextId++
    return new Promise<R>((resolve, reject) => {
      const pending: Pending = { resolve: resolve as (value: never) => void, reject }
      if (signal) {
        const onAbort = () => this.post({ type: 'abort', id })
        signal.addEventListener('abort', onAbort, { once: true })
        pending.done = () => signal.removeEventListener('abort', onAbort)
      }
      this.pending.set(id, pending)
      try {
        this.post(build(id), transfer)
      } catch (error) {
        this.pending.delete(id)
        pending.done?.()
        reject(error)
        return
      }
      if (signal?.aborted) this.post({ type: 'abort', id })
    })
  }

  async fetch(request: Request): Promise<Response> {
    const body = request.body === null ? null : await request.arrayBuffer()
    const headers = [...request.headers] as [string, string][]
    return this.request<Response>(
      (id) => ({ type: 'fetch', id, method: request.method, url: request.url, headers, body }),
      body ? [body] : [],
      request.signal,
    )
  }

  async invoke(method: string, args: unknown[], meta: CallMeta = {}): Promise<Outcome> {
    const { signal, ...rest } = meta
    try {
      return await this.request<Outcome>((id) => ({ type: 'invoke', id, method, args, meta: rest }), [], signal)
    } catch (error) {
      if ((error as { name?: string }).name === 'DataCloneError') {
        const message = `the arguments of ${method}() cannot be sent to a replica thread (they are not structured-cloneable)`
        return { ok: false, error: { type: 'HTTPError', message, status: 400 } }
      }
      if (error instanceof EdgeServeError) return { ok: false, error: { type: error.type, message: error.message, status: error.status } }
      throw error
    }
  }

  private admin<R>(query: AdminQuery): Promise<R> {
    return this.request<R>((id) => ({ type: 'admin', id, query }), [])
  }

  metrics(): Promise<MetricsSnapshot> {
    return this.admin('metrics')
  }

  health(): Promise<ReplicaHealth> {
    return this.admin<ReplicaHealth>('health').catch((error: unknown) => ({
      deployment: this.data.deployment,
      replica: this.data.replica,
      healthy: false,
      message: error instanceof Error ? error.message : String(error),
    }))
  }

  describe(): Promise<ReplicaDescription> {
    return this.admin('describe')
  }

  async terminate(): Promise<void> {
    this.closed = true
    const worker = this.worker
    if (worker) {
      this.lost(worker, new Error('terminated'))
      await worker.terminate()
    }
  }
}
