/**
 * A replica's worker thread: imports the user's module, finds its deployment,
 * hosts one `Replica` of it, and answers the server thread's messages.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { isDeployment, type Deployment } from '../../../deployment/deployment.js'
import { failure, type Outcome } from '../../../deployment/outcome.js'
import { Replica } from '../../../deployment/replica.js'
import { EdgeServeError, RequestCancelledError } from '../../../errors.js'
import { deploymentsOf } from '../../../http/ingress.js'
import { errorResponse } from '../../../http/responses.js'
import { onServeCaptured } from './hook.js'
import type { FromWorker, ThreadWorkerData, ToWorker } from './protocol.js'

const data = workerData as ThreadWorkerData
const port = parentPort!
const post = (message: FromWorker, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer)

/** Deployment `name` among exported values: a deployment itself, or one an app routes to. */
function findIn(values: Iterable<unknown>, name: string): Deployment | undefined {
  for (const value of values) {
    if (isDeployment(value)) {
      if (value.name === name) return value
    } else if (value && typeof value === 'object' && Array.isArray((value as { routes?: unknown }).routes)) {
      try {
        const found = deploymentsOf(value as { routes: { handler: unknown }[] }).get(name)
        if (found) return found
      } catch {
        // two deployments share a name in this app: not ours to judge here
      }
    }
  }
  return undefined
}

function locate(): Promise<{ deployment: Deployment; env: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    onServeCaptured(({ app, deployments, env }) => {
      const deployment = findIn([app, ...deployments], data.deployment)
      if (deployment) resolve({ deployment, env })
    })
    import(data.module).then(
      (module: Record<string, unknown>) => {
        const deployment = findIn(Object.values(module), data.deployment)
        if (deployment) resolve({ deployment, env: data.env })
        else {
          reject(
            new Error(
              `${data.module} neither exports deployment ${data.deployment} (or an app that routes to it) ` +
                'nor passes it to serve(); export it from the module given as threads.module',
            ),
          )
        }
      },
      (error: unknown) => reject(error instanceof Error ? error : new Error(String(error))),
    )
  })
}

let replica: Replica | undefined
const backlog: ToWorker[] = []
/** Per request or call: its abort controller, and the reader of a streamed body. */
const live = new Map<number, { controller: AbortController; reader?: ReadableStreamDefaultReader<Uint8Array> }>()

port.on('message', (message: ToWorker) => {
  if (replica) handle(replica, message)
  else backlog.push(message)
})

locate().then(
  ({ deployment, env }) => {
    replica = new Replica(deployment, data.replica, env)
    post({ type: 'ready' })
    for (const message of backlog.splice(0)) handle(replica, message)
  },
  (error: Error) => post({ type: 'failed', message: error.stack ?? error.message }),
)

function handle(replica: Replica, message: ToWorker): void {
  switch (message.type) {
    case 'fetch':
      void serveFetch(replica, message)
      return
    case 'invoke':
      void serveInvoke(replica, message)
      return
    case 'abort': {
      const entry = live.get(message.id)
      if (!entry) return
      entry.controller.abort(new RequestCancelledError('the client disconnected'))
      void entry.reader?.cancel().catch(() => undefined)
      return
    }
    case 'admin':
      void serveAdmin(replica, message)
  }
}

async function serveFetch(replica: Replica, message: Extract<ToWorker, { type: 'fetch' }>): Promise<void> {
  const { id } = message
  const entry: { controller: AbortController; reader?: ReadableStreamDefaultReader<Uint8Array> } = {
    controller: new AbortController(),
  }
  live.set(id, entry)
  try {
    const request = new Request(message.url, {
      method: message.method,
      headers: message.headers,
      body: message.body,
      signal: entry.controller.signal,
    })
    let response = await replica.fetch(request)
    const head = { id, status: response.status, statusText: response.statusText, headers: [...response.headers] as [string, string][] }
    const streamed = response.body !== null && /^text\/event-stream/i.test(response.headers.get('content-type') ?? '')
    if (!streamed) {
      let body: ArrayBuffer | null = null
      try {
        body = response.body === null ? null : await response.arrayBuffer()
      } catch (error) {
        response = errorResponse(error)
        body = await response.arrayBuffer()
        Object.assign(head, { status: response.status, statusText: response.statusText, headers: [...response.headers] })
      }
      post({ type: 'response', ...head, body }, body ? [body] : [])
      return
    }
    post({ type: 'head', ...head })
    const reader = response.body!.getReader()
    entry.reader = reader
    try {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        const bytes = value.byteOffset === 0 && value.byteLength === value.buffer.byteLength ? value.buffer : value.slice().buffer
        post({ type: 'chunk', id, bytes: bytes as ArrayBuffer }, [bytes as ArrayBuffer])
      }
      post({ type: 'end', id })
    } catch (error) {
      post({ type: 'end', id, error: error instanceof Error ? error.message : String(error) })
    }
  } catch (error) {
    // Replica.fetch never throws; building the Request may (a bad header, say).
    const response = errorResponse(error)
    const body = await response.arrayBuffer()
    post({ type: 'response', id, status: response.status, statusText: response.statusText, headers: [...response.headers], body }, [body])
  } finally {
    live.delete(id)
  }
}

async function serveInvoke(replica: Replica, message: Extract<ToWorker, { type: 'invoke' }>): Promise<void> {
  const { id } = message
  const controller = new AbortController()
  live.set(id, { controller })
  try {
    const outcome = await replica.call(message.method, message.args, { ...message.meta, signal: controller.signal })
    try {
      post({ type: 'outcome', id, outcome })
    } catch {
      const unsendable: Outcome = failure(
        new EdgeServeError(500, `the result of ${message.method}() cannot be sent from its replica thread (it is not structured-cloneable)`),
      )
      post({ type: 'outcome', id, outcome: unsendable })
    }
  } finally {
    live.delete(id)
  }
}

async function serveAdmin(replica: Replica, message: Extract<ToWorker, { type: 'admin' }>): Promise<void> {
  const value =
    message.query === 'metrics' ? replica.metrics.snapshot() : message.query === 'health' ? await replica.health() : replica.describe()
  post({ type: 'admin', id: message.id, value })
}
