/**
 * Messages between the server thread and a replica's worker thread.
 *
 * Requests cross as method, URL, headers and body bytes (the body ArrayBuffer
 * is transferred, not copied); responses come back as status, headers and
 * body bytes. A `text/event-stream` response is relayed chunk by chunk;
 * any other body is buffered in the worker and sent whole.
 */
import type { CallMeta, ReplicaDescription, ReplicaHealth } from '../../../deployment/replica.js'
import type { Outcome } from '../../../deployment/outcome.js'
import type { MetricsSnapshot } from '../../../metrics/registry.js'

export type Headers = [string, string][]

/** Given to each worker at start (`workerData`). */
export interface ThreadWorkerData {
  /** Marks the worker as an edgeserve replica host (see `inReplicaThread()`). */
  edgeserveReplicaThread: true
  /** The module that exports the app (or a deployment), or that calls serve() with it. */
  module: string
  deployment: string
  replica: number
  /** The structured-cloneable part of `serve({ env })`. */
  env: Record<string, unknown>
  /** Register tsx in the worker (the server thread was not started through tsx). */
  registerTsx: boolean
}

export type AdminQuery = 'metrics' | 'health' | 'describe'

export type ToWorker =
  | { type: 'fetch'; id: number; method: string; url: string; headers: Headers; body: ArrayBuffer | null }
  | { type: 'invoke'; id: number; method: string; args: unknown[]; meta: Omit<CallMeta, 'signal'> }
  | { type: 'abort'; id: number }
  | { type: 'admin'; id: number; query: AdminQuery }

export type FromWorker =
  | { type: 'ready' }
  | { type: 'failed'; message: string }
  /** A whole response (`body` null for none). */
  | { type: 'response'; id: number; status: number; statusText: string; headers: Headers; body: ArrayBuffer | null }
  /** The head of a streamed response; `chunk` messages and one `end` follow. */
  | { type: 'head'; id: number; status: number; statusText: string; headers: Headers }
  | { type: 'chunk'; id: number; bytes: ArrayBuffer }
  | { type: 'end'; id: number; error?: string }
  | { type: 'outcome'; id: number; outcome: Outcome }
  | { type: 'admin'; id: number; value: MetricsSnapshot | ReplicaHealth | ReplicaDescription }
