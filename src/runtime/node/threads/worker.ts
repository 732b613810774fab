/**
 * A replica's worker thread: imports the user's module, finds its deployment,
 * hosts one `Replica` of it, and answers the server thread's messages.
 */
import { setLogLevel } from '../../../metrics/log.js'
import { availableParallelism } from 'node:os'
import { parentPort, workerData } from 'node:worker_threads'
import { RequestScope } from '../../../deployment/request-scope.js'
import { loadedModels } from '../../../onnx/loaded-models.js'
import { setDefaultNumThreads } from '../../../onnx/threads.js'
import { isDeployment, type Deployment } from '../../../deployment/deployment.js'
import { Replica } from '../../../deployment/replica.js'
import { answerBadJsonWith400 } from '../../../deployment/body/json-or-400.js'
import { errorResponse, RequestCancelledError, RequestTimeoutError } from '../../../errors.js'
import { deploymentsOf } from '../../../http/ingress.js'
import { onServeCaptured } from './hook.js'
import type { HeaderList, ThreadWorkerData, ToWorker } from './protocol.js'
import { outboxSender } from './outbox.js'
import { relayBody, sendOutcome, type OutcomeSink } from './relay.js'
import { BodyDownload } from './request-body.js'
import { ServerCalls, serverBindings } from './server-calls.js'

const data = workerData as ThreadWorkerData
setLogLevel(data.logLevel)

// The deployment's replicas share the machine's cores: with one ORT thread
// pool each as large as the machine, two replicas would fight over every core.
setDefaultNumThreads(Math.max(1, Math.floor(availableParallelism() / data.replicasOnThreads)))
const port = parentPort!
const post = outboxSender(port)
/** This thread's handle calls to the deployments its server hosts. */
const serverCalls = new ServerCalls(post)

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
/** Per request or call: its scope, which the server's `abort` message cancels, the reader of a streamed answer, and the request's body. */
interface Live {
  scope: RequestScope
  reader?: ReadableStreamDefaultReader<Uint8Array>
  body?: BodyDownload
}
const live = new Map<number, Live>()

port.on('message', (message: ToWorker) => {
  if (serverCalls.receive(message)) return
  if (replica) handle(replica, message)
  else backlog.push(message)
})

locate().then(
  ({ deployment, env }) => {
    // As in process, the server's deployments are in the env under their bindings: calls to them go to the server.
    replica = new Replica(deployment, data.replica, { ...env, ...serverBindings(data.served, serverCalls) })
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
      const cancelled = message.timedOut ? new RequestTimeoutError() : new RequestCancelledError('the client disconnected')
      entry.scope.cancel(cancelled)
      entry.body?.fail(cancelled)
      void entry.reader?.cancel().catch(() => undefined)
      return
    }
    case 'body-chunk':
    case 'body-end':
      live.get(message.id)?.body?.receive(message)
      return
    case 'admin':
      void serveAdmin(replica, message)
      return
    case 'stop':
      void replica.stop().then(() => post({ type: 'stopped' }))
      return
    case 'call-outcome':
    case 'call-stream':
    case 'call-chunk':
    case 'call-end':
      // Answers to this thread's own handle calls: the port's listener gives them to serverCalls, never here.
      return
  }
}

const headersOf = (response: Response): HeaderList => [...response.headers]

async function serveFetch(replica: Replica, message: Extract<ToWorker, { type: 'fetch' }>): Promise<void> {
  const { id } = message
  const entry: Live = { scope: new RequestScope({ origin: 'http', deadline: message.deadline, multiplexedModelId: message.multiplexedModelId }) }
  live.set(id, entry)
  try {
    let body: ReadableStream<Uint8Array> | null = null
    if (message.hasBody) {
      entry.body = new BodyDownload(
        () => post({ type: 'body-pull', id }),
        () => post({ type: 'body-cancel', id }),
      )
      body = entry.body.stream
    }
    // A stream body needs `duplex` in Node's Request.
    const request = new Request(message.url, { method: message.method, headers: message.headers, body, duplex: 'half' } as RequestInit)
    if (body !== null) answerBadJsonWith400(request)
    // The deadline holds until the answer is ready, as in process; an abort still ends a streamed body.
    const answer = await replica.answer(request, entry.scope).finally(() => entry.scope.close())
    if ('plain' in answer) {
      const { status, contentType, body } = answer.plain
      const bytes = body === null ? null : ownBytes(body)
      post(
        { type: 'response', id, status, statusText: '', headers: contentType === undefined ? [] : [['content-type', contentType]], body: bytes },
        bytes ? [bytes] : [],
      )
      return
    }
    let response = answer.response
    const streamed = response.body !== null && /^text\/event-stream/i.test(response.headers.get('content-type') ?? '')
    if (!streamed) {
      let body: ArrayBuffer | null
      try {
        body = response.body === null ? null : await response.arrayBuffer()
      } catch (error) {
        response = errorResponse(error)
        body = await response.arrayBuffer()
      }
      const { status, statusText } = response
      post({ type: 'response', id, status, statusText, headers: headersOf(response), body }, body ? [body] : [])
      return
    }
    post({ type: 'head', id, status: response.status, statusText: response.statusText, headers: headersOf(response) })
    await relay(id, entry, response.body!)
  } catch (error) {
    // Replica.fetch never throws; building the Request may (a bad header, say).
    const response = errorResponse(error)
    const body = await response.arrayBuffer()
    post({ type: 'response', id, status: response.status, statusText: response.statusText, headers: headersOf(response), body }, [body])
  } finally {
    live.delete(id)
  }
}

/**
 * A plain answer's body as an ArrayBuffer of its own, to transfer. Never the
 * user's memory, which transferring would take from them: a Node Buffer, for
 * one, may be a view of a pool that other Buffers share.
 */
function ownBytes(body: string | Uint8Array | ArrayBuffer): ArrayBuffer {
  // The Encoding standard gives encode()'s bytes a new buffer of their exact length.
  if (typeof body === 'string') return encoder.encode(body).buffer
  if (body instanceof ArrayBuffer) return body.slice(0)
  // new Uint8Array(view) copies the view's bytes into a buffer of their exact length.
  return new Uint8Array(body).buffer
}
const encoder = new TextEncoder()

/** Where request `id`'s streamed body goes: each chunk (its buffer transferred), then `end`. */
function streamOf(id: number): Pick<OutcomeSink, 'chunk' | 'end'> {
  return {
    chunk: (bytes) => post({ type: 'chunk', id, bytes }, [bytes]),
    end: (error) => post(error === undefined ? { type: 'end', id } : { type: 'end', id, error }),
  }
}

/** Send a body chunk by chunk, then `end`; an abort cancels the reader. */
function relay(id: number, entry: Live, body: ReadableStream<Uint8Array>): Promise<void> {
  const { chunk, end } = streamOf(id)
  return relayBody(body, chunk, end, (reader) => (entry.reader = reader))
}

async function serveInvoke(replica: Replica, message: Extract<ToWorker, { type: 'invoke' }>): Promise<void> {
  const { id } = message
  const entry: Live = { scope: new RequestScope({ origin: 'handle', deadline: message.deadline, multiplexedModelId: message.multiplexedModelId }) }
  live.set(id, entry)
  try {
    const outcome = await replica.invoke(message.method, message.args, entry.scope).finally(() => entry.scope.close())
    await sendOutcome(
      outcome,
      {
        whole: (whole) => post({ type: 'outcome', id, outcome: whole }),
        stream: () => post({ type: 'stream', id }),
        ...streamOf(id),
      },
      `the result of ${message.method}() cannot be sent from its replica thread (it is not structured-cloneable)`,
      (reader) => (entry.reader = reader),
    )
  } finally {
    live.delete(id)
  }
}

async function serveAdmin(replica: Replica, message: Extract<ToWorker, { type: 'admin' }>): Promise<void> {
  const { id } = message
  switch (message.query) {
    case 'metrics':
      return post({ type: 'metrics', id, snapshot: await replica.metrics() })
    case 'health':
      return post({ type: 'health', id, health: await replica.health() })
    case 'describe': {
      // The models this thread loaded ride along, for /-/routes.
      return post({ type: 'describe', id, description: { ...(await replica.describe()), models: loadedModels() } })
    }
  }
}
