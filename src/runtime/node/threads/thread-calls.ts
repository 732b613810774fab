/**
 * The server thread's side of the handle calls that a replica thread makes
 * to the deployments the server hosts (`call` messages; the thread's side is
 * server-calls.ts). Each is routed through the deployment's router, held to
 * the same limits as any handle call made here, so a deployment composed of
 * others runs on a thread as it does in process.
 */
import type { Invoke } from '../../../deployment/handle.js'
import { failure } from '../../../deployment/outcome.js'
import { RequestCancelledError } from '../../../errors.js'
import type { FromWorker, ToWorker } from './protocol.js'
import { sendOutcome } from './relay.js'

/** How to call the deployment under `binding`, if the server hosts one. */
export type ServedDeployments = (binding: string) => Invoke | undefined

interface CallInFlight {
  controller: AbortController
  reader?: ReadableStreamDefaultReader<Uint8Array>
}

export class ThreadCalls {
  readonly #live = new Map<number, CallInFlight>()

  constructor(
    private readonly served: ServedDeployments,
    private readonly post: (message: ToWorker, transfer?: ArrayBuffer[]) => void,
  ) {}

  receive(message: Extract<FromWorker, { type: 'call' | 'call-abort' }>): void {
    if (message.type === 'call') void this.#serve(message)
    else this.#abort(message.id, new RequestCancelledError('the handle call was cancelled in its replica thread'))
  }

  /** The thread is gone: nobody is left to answer. */
  abandon(): void {
    for (const id of [...this.#live.keys()]) this.#abort(id, new RequestCancelledError('the replica thread that made this handle call ended'))
  }

  async #serve(message: Extract<FromWorker, { type: 'call' }>): Promise<void> {
    const { id, binding, method, args, deadline, multiplexedModelId } = message
    const call: CallInFlight = { controller: new AbortController() }
    this.#live.set(id, call)
    try {
      const invoke = this.served(binding)
      const outcome = invoke
        ? await invoke(method, args, call.controller.signal, { deadline, multiplexedModelId }).catch(failure)
        : failure(new Error(`this server hosts no deployment under the binding ${JSON.stringify(binding)}`))
      await sendOutcome(
        outcome,
        {
          whole: (whole) => this.post({ type: 'call-outcome', id, outcome: whole }),
          stream: () => this.post({ type: 'call-stream', id }),
          chunk: (bytes) => this.post({ type: 'call-chunk', id, bytes }, [bytes]),
          end: (error) => this.post(error === undefined ? { type: 'call-end', id } : { type: 'call-end', id, error }),
        },
        `the result of ${method}() cannot be sent to the replica thread that called it (it is not structured-cloneable)`,
        (reader) => (call.reader = reader),
      )
    } finally {
      this.#live.delete(id)
    }
  }

  #abort(id: number, reason: Error): void {
    const call = this.#live.get(id)
    if (!call) return
    call.controller.abort(reason)
    void call.reader?.cancel(reason).catch(() => undefined)
  }
}
