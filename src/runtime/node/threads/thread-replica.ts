import { currentLogLevel } from '../../../metrics/log.js'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { Worker } from 'node:worker_threads'
import type { Deployment } from '../../../deployment/deployment.js'
import type { ReplicaCall, ReplicaDescription, ReplicaEndpoint, ReplicaHealth } from '../../../deployment/endpoint.js'
import type { Outcome } from '../../../deployment/outcome.js'
import { DeadlineTimer } from '../../../batching/deadlines.js'
import { cancellation, errorResponse, RequestCancelledError, RequestTimeoutError, ReplicaUnavailableError } from '../../../errors.js'
import type { MetricsSnapshot } from '../../../metrics/registry.js'
import { startWorker } from './exec-argv.js'
import type { FromWorker, ThreadWorkerData, ToWorker } from './protocol.js'
import { incomingBody, callFailure } from './relay.js'
import { BodyUpload } from './request-body.js'
import { ThreadCalls, type ServedDeployments } from './thread-calls.js'
import { isTypeScript, tsxMissing } from '../typescript-loader.js'

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
  deployments?: readonly string[] | undefined
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
 * Running from the repository's src/ (through tsx), not from the package's
 * dist/: the worker is TypeScript too, and it must resolve 'edgeserve' to
 * src/ as this thread does (the "edgeserve-source" condition), so that the
 * app it imports shares its modules.
 */
const FROM_SOURCE = import.meta.url.endsWith('.ts')
const WORKER = new URL(FROM_SOURCE ? './worker.ts' : './worker.js', import.meta.url).href
const WORKER_EXEC_ARGV = FROM_SOURCE ? [...process.execArgv, '--conditions=edgeserve-source'] : undefined

/**
 * Whether a worker must register tsx: whenever it loads TypeScript (the
 * user's module, or edgeserve's own source). A worker does not get the tsx
 * hooks of its process, whether the tsx CLI registered them in its preflight
 * or `node --import tsx` did (Node 20 runs neither in a worker), and where a
 * later Node does pass them on, registering tsx again is harmless.
 */
function workerNeedsTsx(module: string): boolean {
  return FROM_SOURCE || isTypeScript(module)
}

/** What a replica thread can call on its server: the deployments it hosts, by binding. */
export interface ServerDeployments {
  bindings: string[]
  call: ServedDeployments
}

/** One ThreadReplica per replica of `deployment`; each starts its worker on `start()` or on first use. */
export function threadReplicas(
  deployment: Deployment,
  threads: ThreadsOption,
  env: Record<string, unknown> | undefined,
  server: ServerDeployments,
): ThreadReplica[] {
  const module = moduleUrl(threads.module)
  const base = {
    module,
    worker: WORKER,
    deployment: deployment.name,
    env: cloneableEnv(env),
    logLevel: currentLogLevel(),
    served: server.bindings,
    registerTsx: workerNeedsTsx(module),
    tsxMissing: tsxMissing(module),
    nodeMayStripTypes: !FROM_SOURCE,
  }
  return Array.from(
    { length: deployment.options.numReplicas },
    (_, i) => new ThreadReplica({ ...base, replica: i, replicasOnThreads: deployment.options.numReplicas, edgeserveReplicaThread: true }, server.call),
  )
}

type Answer = Extract<FromWorker, { type: 'response' | 'head' | 'outcome' | 'stream' | 'metrics' | 'health' | 'describe' }>

/** One request or call in flight to the worker, until its answer (and streamed body, if any) is complete. */
interface Exchange {
  resolve(answer: Answer, body?: ReadableStream<Uint8Array>): void
  reject(error: Error): void
  /** Set while a streamed body is being relayed. */
  body?: ReadableStreamDefaultController<Uint8Array>
  /** The request's body, sent after it: whole, or as the thread asks for it. */
  upload?: BodyUpload
  /** Drop the abort listener and stop watching the deadline. */
  done(): void
  /** The answer's head came, with a streamed body to follow: the deadline no longer applies, as in process. */
  answered(): void
  /** The thread it was sent to: only that thread's end fails it. */
  worker: Worker | undefined
}

/**
 * One replica on its own worker thread, as the router and admin routes see
 * it: requests, calls and admin queries cross as messages (see
 * protocol.ts), and the client's disconnect crosses as an `abort` message.
 */
export class ThreadReplica implements ReplicaEndpoint {
  #worker: Worker | undefined
  #ready: Promise<void> | undefined
  readonly #exchanges = new Map<number, Exchange>()
  #nextId = 1
  #closed = false
  /**
   * The exchanges' deadlines, on one timer for the replica rather than one
   * per request. Kept on this side of the thread: a thread stuck in a model
   * run cannot answer, so a passed deadline answers 504 here and tells the
   * thread to stop.
   */
  readonly #deadlines = new DeadlineTimer<number>((id) => this.#end(id, new RequestTimeoutError()))
  /** The handle calls the current thread makes to the server's deployments. */
  #calls: ThreadCalls | undefined

  constructor(
    private readonly data: ThreadWorkerData,
    private readonly served: ServedDeployments,
  ) {}

  get name(): string {
    return `${this.data.deployment}/${this.data.replica}`
  }

  /** Spawn the worker (again, after a crash) and wait until it hosts the replica. */
  start(): Promise<void> {
    if (this.#closed) return Promise.reject(new ReplicaUnavailableError('the server is shutting down'))
    return (this.#ready ??= new Promise<void>((resolve, reject) => {
      const worker = startWorker(fileURLToPath(BOOTSTRAP), { workerData: this.data, name: this.name, execArgv: WORKER_EXEC_ARGV })
      this.#worker = worker
      // Bound to this thread: a call's answer must never reach the thread that replaces it.
      const calls = (this.#calls = new ThreadCalls(this.served, (message, transfer = []) => worker.postMessage(message, transfer)))
      worker.on('message', (message: FromWorker) => {
        if (message.type === 'stopped') return // stop() listens for it
        if (message.type === 'call' || message.type === 'call-abort') calls.receive(message)
        else if (message.type === 'ready') resolve()
        else if (message.type === 'responses') for (const response of message.responses) this.#receive(response)
        else if (message.type === 'failed') {
          reject(new Error(`replica ${this.name} could not start in its thread: ${message.message}`))
          void worker.terminate()
        } else this.#receive(message)
      })
      worker.on('error', (error) => {
        reject(error)
        this.#lost(worker, error)
      })
      worker.on('exit', (code) => {
        reject(new Error(`the thread of replica ${this.name} exited with code ${code}`))
        this.#lost(worker, new Error(`exit code ${code}`))
      })
    }))
  }

  async fetch(request: Request, call: ReplicaCall): Promise<Response> {
    try {
      // GET and HEAD carry no body (and asking for one would make @hono/node-server build a whole Request).
      const hasBody = request.method !== 'GET' && request.method !== 'HEAD'
      const message = {
        method: request.method,
        url: request.url,
        headers: [...request.headers],
        hasBody,
        deadline: call.deadline,
        multiplexedModelId: call.multiplexedModelId,
      }
      // The body follows the request's message (see request-body.ts).
      const upload = hasBody ? (id: number) => new BodyUpload(request, (part, transfer) => this.#post({ ...part, id }, transfer)) : undefined
      const { answer, body: streamed } = await this.#exchange((id) => ({ type: 'fetch', id, ...message }), call, upload)
      if (answer.type === 'head') return new Response(streamed ?? null, answer)
      // As bytes, not an ArrayBuffer: @hono/node-server writes those without building the platform's Response.
      if (answer.type === 'response') return new Response(answer.body === null ? null : new Uint8Array(answer.body), answer)
      throw new Error(`replica ${this.name} answered a request with a ${answer.type} message`)
    } catch (error) {
      return errorResponse(error)
    }
  }

  async invoke(method: string, args: unknown[], call: ReplicaCall): Promise<Outcome> {
    try {
      const { answer, body } = await this.#exchange(
        (id) => ({ type: 'invoke', id, method, args, deadline: call.deadline, multiplexedModelId: call.multiplexedModelId }),
        call,
      )
      if (answer.type === 'stream' && body) return { ok: true, stream: body }
      if (answer.type === 'outcome') return answer.outcome
      throw new Error(`replica ${this.name} answered a call with a ${answer.type} message`)
    } catch (error) {
      return callFailure(error, method, 'to a replica thread')
    }
  }

  async metrics(): Promise<MetricsSnapshot> {
    const { answer } = await this.#exchange((id) => ({ type: 'admin', id, query: 'metrics' }), {})
    if (answer.type !== 'metrics') throw new Error(`replica ${this.name} answered metrics with a ${answer.type} message`)
    return answer.snapshot
  }

  async health(): Promise<ReplicaHealth> {
    try {
      const { answer } = await this.#exchange((id) => ({ type: 'admin', id, query: 'health' }), {})
      if (answer.type !== 'health') throw new Error(`replica ${this.name} answered health with a ${answer.type} message`)
      return answer.health
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      return { deployment: this.data.deployment, replica: this.data.replica, healthy: false, message }
    }
  }

  async describe(): Promise<ReplicaDescription> {
    const { answer } = await this.#exchange((id) => ({ type: 'admin', id, query: 'describe' }), {})
    if (answer.type !== 'describe') throw new Error(`replica ${this.name} answered describe with a ${answer.type} message`)
    return answer.description
  }

  /**
   * Autoscaling took this replica out of service and it holds no request:
   * its instance's `dispose()` runs in the thread, then the thread ends. The
   * thread is let go of first, so a request routed here meanwhile (scaled up
   * again) starts a fresh one rather than meeting a dying one.
   */
  async stop(): Promise<void> {
    const worker = this.#worker
    const ready = this.#ready
    if (!worker || !ready) return
    this.#worker = undefined
    this.#ready = undefined
    try {
      await ready
      await new Promise<void>((resolve) => {
        worker.on('message', (message: FromWorker) => {
          if (message.type === 'stopped') resolve()
        })
        worker.once('exit', () => resolve())
        worker.postMessage({ type: 'stop' } satisfies ToWorker)
      })
    } catch {
      // It never started, or crashed: nothing left to dispose of.
    } finally {
      await worker.terminate()
      this.#lost(worker, new Error('stopped by the autoscaler'))
    }
  }

  async terminate(): Promise<void> {
    this.#closed = true
    const worker = this.#worker
    if (worker) {
      this.#lost(worker, new Error('terminated'))
      await worker.terminate()
    }
  }

  /**
   * Send the message built for a fresh id and wait for its answer. The
   * call's signal aborting posts an `abort`; its deadline passing answers
   * 504 here even if the worker is stuck in a CPU-bound loop (#deadlines).
   */
  async #exchange(
    build: (id: number) => ToWorker,
    call: ReplicaCall,
    upload?: (id: number) => BodyUpload,
  ): Promise<{ answer: Answer; body: ReadableStream<Uint8Array> | undefined }> {
    if (!this.#ready || !this.#worker) await this.start()
    else await this.#ready
    const id = this.#nextId++
    return new Promise((resolve, reject) => {
      const { signal, deadline } = call
      // The call's signal aborts when its client goes away or its deadline passes: its reason says which.
      const abort = () => this.#end(id, cancellation(signal?.reason))
      if (deadline !== undefined) this.#deadlines.watch(id, deadline)
      const exchange: Exchange = {
        worker: this.#worker,
        ...(upload ? { upload: upload(id) } : {}),
        resolve: (answer, body) => resolve({ answer, body }),
        reject,
        done: () => {
          signal?.removeEventListener('abort', abort)
          this.#deadlines.forget(id)
        },
        answered: () => this.#deadlines.forget(id),
      }
      this.#exchanges.set(id, exchange)
      try {
        this.#post(build(id))
        exchange.upload?.start()
      } catch (error) {
        this.#exchanges.delete(id)
        exchange.done()
        reject(error instanceof Error ? error : new Error(String(error)))
        return
      }
      if (signal?.aborted) abort()
      else signal?.addEventListener('abort', abort, { once: true })
    })
  }

  /**
   * End exchange `id` here, before its answer: the caller gets `reason` at
   * once, and the thread is told to stop and why, so that its own records
   * agree. Decided on this side, not by whatever the thread answers to the
   * abort: that answer could cross back before this side's deadline timer
   * fired, and would call a request past its deadline (504) cancelled (499).
   */
  #end(id: number, reason: RequestTimeoutError | RequestCancelledError): void {
    this.#settle(id, (it) => {
      this.#post({ type: 'abort', id, timedOut: reason instanceof RequestTimeoutError })
      it.body?.error(reason)
      it.reject(reason)
    })
  }

  /** End exchange `id`: forget it, drop its listeners, then `finish` it. */
  #settle(id: number, finish: (exchange: Exchange) => void): void {
    const exchange = this.#exchanges.get(id)
    if (!exchange) return
    this.#exchanges.delete(id)
    exchange.done()
    finish(exchange)
  }

  #receive(message: Exclude<FromWorker, { type: 'ready' | 'failed' | 'stopped' | 'call' | 'call-abort' | 'responses' }>): void {
    const exchange = this.#exchanges.get(message.id)
    if (!exchange) return
    switch (message.type) {
      case 'head':
      case 'stream': {
        // A streamed body follows as chunks; the exchange lasts until its end.
        const { body, controller } = incomingBody(() => this.#settle(message.id, () => this.#post({ type: 'abort', id: message.id, timedOut: false })))
        exchange.body = controller
        exchange.answered()
        exchange.resolve(message, body)
        return
      }
      case 'chunk':
        exchange.body?.enqueue(new Uint8Array(message.bytes))
        return
      case 'body-pull':
        void exchange.upload?.pull()
        return
      case 'body-cancel':
        exchange.upload?.cancel()
        return
      case 'end':
        this.#settle(message.id, (it) => {
          if (message.error) it.body?.error(new Error(message.error))
          else it.body?.close()
        })
        return
      default:
        this.#settle(message.id, (it) => it.resolve(message))
    }
  }

  /** The worker is gone: fail what it held; the next request starts a new one. */
  #lost(worker: Worker, cause: Error): void {
    if (this.#worker === worker) {
      this.#worker = undefined
      this.#ready = undefined
      this.#calls?.abandon()
      this.#calls = undefined
    }
    const error = new ReplicaUnavailableError(`replica ${this.name} stopped while serving this request (its thread ended)`, { cause })
    for (const [id, exchange] of [...this.#exchanges]) {
      if (exchange.worker !== worker) continue
      this.#settle(id, (it) => {
        it.body?.error(error)
        it.reject(error)
      })
    }
  }

  #post(message: ToWorker, transfer: ArrayBuffer[] = []): void {
    this.#worker?.postMessage(message, transfer)
  }
}
