/**
 * Messages between the server thread and a replica's worker thread.
 *
 * Requests cross as method, URL and headers, and their body follows: whole
 * when small, else a chunk at a time as the replica reads it (see
 * request-body.ts). Bytes are transferred, not copied. Responses come back
 * as status, headers and body bytes. A `text/event-stream` response, and a
 * handle call whose result is a stream (NDJSON, see stream-codec.ts), are
 * relayed chunk by chunk; any other body is buffered in the worker and sent
 * whole.
 *
 * The other way, a replica in the thread calls the deployments its server
 * hosts through handles: `call` messages, answered by `call-*` messages
 * (see server-calls.ts and thread-calls.ts).
 */
import type { LogLevel } from '../../../metrics/log.js'
import type { ReplicaDescription, ReplicaHealth } from '../../../deployment/endpoint.js'
import type { Outcome } from '../../../deployment/outcome.js'
import type { MetricsSnapshot } from '../../../metrics/registry.js'

export type HeaderList = [string, string][]

/** Why reading a request body failed, as it crosses: the message, and Node's error code (an `HPE_` parser error is a 400). */
export interface BodyError {
  message: string
  code?: string
}

/** The server's answer to a `body-pull` (see request-body.ts), without the request's id. */
export type BodyMessage = { type: 'body-chunk'; bytes: ArrayBuffer } | { type: 'body-end'; bytes?: ArrayBuffer; error?: BodyError }

/** Given to each worker at start (`workerData`). */
export interface ThreadWorkerData {
  /** Marks the worker as an edgeserve replica host (see `inReplicaThread()`). */
  edgeserveReplicaThread: true
  /** The module that exports the app (or a deployment), or that calls serve() with it. */
  module: string
  deployment: string
  replica: number
  /** How many replicas of this deployment run on threads: they share the machine's cores. */
  replicasOnThreads: number
  /** The structured-cloneable part of `serve({ env })`. */
  env: Record<string, unknown>
  /** The server's log level (`serve({ logLevel })`, `--log-level`): a thread's own module state starts from the environment. */
  logLevel: LogLevel
  /**
   * The bindings of every deployment the server hosts: in the thread, a
   * handle to one of them (a bound deployment, `getHandle()`) calls it
   * through the server thread (see server-calls.ts).
   */
  served: string[]
  /** The worker module the bootstrap imports: worker.ts from source, worker.js from the package. */
  worker: string
  /** Register tsx in the worker: it loads TypeScript and does not inherit tsx (see thread-replica.ts). */
  registerTsx: boolean
  /** What the worker reports when it needs tsx and cannot import it. */
  tsxMissing: string
  /** Whether Node's own type stripping may load the module instead of tsx (not edgeserve's source, which needs tsx). */
  nodeMayStripTypes: boolean
}

export type AdminQuery = 'metrics' | 'health' | 'describe'

export type ToWorker =
  | {
      type: 'fetch'
      id: number
      method: string
      url: string
      headers: HeaderList
      /** Whether a body follows (see request-body.ts). */
      hasBody: boolean
      deadline: number | undefined
      multiplexedModelId: string | undefined
    }
  | { type: 'invoke'; id: number; method: string; args: unknown[]; deadline: number | undefined; multiplexedModelId: string | undefined }
  /** Stop serving request or call `id`: its deadline passed (`timedOut`), or its client went away. */
  | { type: 'abort'; id: number; timedOut: boolean }
  /** The answer to request `id`'s `body-pull`: a chunk of its body, or its end. */
  | (BodyMessage & { id: number })
  | { type: 'admin'; id: number; query: AdminQuery }
  /** Autoscaling removed this idle replica: dispose of its instance and say `stopped`; the thread is ended then. */
  | { type: 'stop' }
  /** The answer to the thread's handle call `id` (a `call` message): whole, or `call-stream` then chunks and one end. */
  | { type: 'call-outcome'; id: number; outcome: WholeOutcome }
  | { type: 'call-stream'; id: number }
  | { type: 'call-chunk'; id: number; bytes: ArrayBuffer }
  | { type: 'call-end'; id: number; error?: string }

/** A call's outcome that crosses as one message: not a stream. */
export type WholeOutcome = Exclude<Outcome, { stream: ReadableStream<Uint8Array> }>

/** A whole response (`body` null for none). */
export type WholeResponse = { type: 'response'; id: number; status: number; statusText: string; headers: HeaderList; body: ArrayBuffer | null }

export type FromWorker =
  | { type: 'ready' }
  | { type: 'failed'; message: string }
  | WholeResponse
  /** Whole responses that were ready together, in the order they were (see outbox.ts). */
  | { type: 'responses'; responses: WholeResponse[] }
  /** The head of a streamed response; `chunk` messages and one `end` follow. */
  | { type: 'head'; id: number; status: number; statusText: string; headers: HeaderList }
  /** A call's result is a stream: NDJSON `chunk` messages and one `end` follow. */
  | { type: 'stream'; id: number }
  | { type: 'chunk'; id: number; bytes: ArrayBuffer }
  | { type: 'end'; id: number; error?: string }
  | { type: 'outcome'; id: number; outcome: WholeOutcome }
  /** Request `id`'s code reads its body: the next chunk, please; or it stopped reading (a size limit). */
  | { type: 'body-pull'; id: number }
  | { type: 'body-cancel'; id: number }
  | { type: 'metrics'; id: number; snapshot: MetricsSnapshot }
  | { type: 'health'; id: number; health: ReplicaHealth }
  | { type: 'describe'; id: number; description: ReplicaDescription }
  | { type: 'stopped' }
  /**
   * A handle call made in the thread to a deployment the server hosts, by
   * its binding: the server routes it as it routes its own handle calls.
   * `id` numbers the thread's calls, apart from the server's requests.
   */
  | { type: 'call'; id: number; binding: string; method: string; args: unknown[]; deadline: number | undefined; multiplexedModelId: string | undefined }
  /** The thread's caller gave up on call `id` (cancelled, or stopped reading its stream). */
  | { type: 'call-abort'; id: number }
