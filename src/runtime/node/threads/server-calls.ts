/**
 * A replica thread's handles to the deployments its server hosts.
 *
 * A deployment composed of others (bound with `.bind(detector, recognizer)`,
 * or calling `getHandle()`) finds them in its env by binding. In process
 * that is the server's own `ReplicaSet`; in a replica thread, the env holds a
 * `ServerDeployment` for each, and a handle call to it crosses to the server
 * thread as a `call` message, where the deployment's router takes it as it
 * takes any handle call (see thread-calls.ts). So the called deployment may
 * run in process or on threads of its own: the caller cannot tell.
 */
import type { Deployment } from '../../../deployment/deployment.js'
import type { ReplicaCall, ReplicaDescription, ReplicaEndpoint, ReplicaHealth } from '../../../deployment/endpoint.js'
import type { Outcome } from '../../../deployment/outcome.js'
import { relayedReplicaSet, registerBindingAdapter, type ReplicaSet } from '../../../deployment/replica-set.js'
import { EdgeServeError } from '../../../errors.js'
import type { MetricsSnapshot } from '../../../metrics/registry.js'
import type { FromWorker, ToWorker } from './protocol.js'
import { incomingBody, callFailure } from './relay.js'

interface PendingCall {
  resolve(outcome: Outcome): void
  /** Set while a streamed result is being received. */
  body?: ReadableStreamDefaultController<Uint8Array>
}

/** This thread's calls to its server, numbered apart from the server's requests to it. */
export class ServerCalls {
  readonly #pending = new Map<number, PendingCall>()
  #nextId = 1

  constructor(private readonly post: (message: FromWorker) => void) {}

  /** Call `method` of the deployment under `binding` on the server; its outcome, whole or streamed. */
  invoke(binding: string, method: string, args: unknown[], call: ReplicaCall): Promise<Outcome> {
    const id = this.#nextId++
    const { signal, deadline, multiplexedModelId } = call
    return new Promise<Outcome>((resolve) => {
      const abort = () => this.post({ type: 'call-abort', id })
      const done = (outcome: Outcome) => {
        signal?.removeEventListener('abort', abort)
        resolve(outcome)
      }
      this.#pending.set(id, { resolve: done })
      try {
        this.post({ type: 'call', id, binding, method, args, deadline, multiplexedModelId })
      } catch (error) {
        this.#pending.delete(id)
        return done(callFailure(error, method, 'from a replica thread to its server'))
      }
      if (signal?.aborted) abort()
      else signal?.addEventListener('abort', abort, { once: true })
    })
  }

  /** An answer from the server; false for messages that are not answers to this thread's calls. */
  receive(message: ToWorker): boolean {
    switch (message.type) {
      case 'call-outcome':
        this.#settle(message.id)?.resolve(message.outcome)
        return true
      case 'call-stream': {
        const pending = this.#pending.get(message.id)
        if (!pending) return true
        const { body, controller } = incomingBody(() => {
          this.#settle(message.id)
          this.post({ type: 'call-abort', id: message.id })
        })
        pending.body = controller
        pending.resolve({ ok: true, stream: body })
        return true
      }
      case 'call-chunk':
        this.#pending.get(message.id)?.body?.enqueue(new Uint8Array(message.bytes))
        return true
      case 'call-end': {
        const body = this.#settle(message.id)?.body
        if (message.error === undefined) body?.close()
        else body?.error(new Error(message.error))
        return true
      }
      default:
        return false
    }
  }

  #settle(id: number): PendingCall | undefined {
    const pending = this.#pending.get(id)
    this.#pending.delete(id)
    return pending
  }
}

/**
 * What a replica thread's env holds under the binding of a deployment its
 * server hosts: the server routes the calls, so here one endpoint relays
 * them all.
 */
export class ServerDeployment implements ReplicaEndpoint {
  #replicas: ReplicaSet | undefined

  constructor(
    readonly binding: string,
    private readonly calls: ServerCalls,
  ) {}

  replicaSet(deployment: Deployment): ReplicaSet {
    return (this.#replicas ??= relayedReplicaSet(deployment, this))
  }

  invoke(method: string, args: unknown[], call: ReplicaCall): Promise<Outcome> {
    return this.calls.invoke(this.binding, method, args, call)
  }

  // Only handle calls come this way: HTTP and the admin routes reach the server itself.
  async fetch(): Promise<Response> {
    throw this.#serverOnly('HTTP requests')
  }

  async metrics(): Promise<MetricsSnapshot> {
    throw this.#serverOnly('metrics')
  }

  async health(): Promise<ReplicaHealth> {
    throw this.#serverOnly('health checks')
  }

  async describe(): Promise<ReplicaDescription> {
    throw this.#serverOnly('descriptions')
  }

  #serverOnly(what: string): EdgeServeError {
    return new EdgeServeError(500, `${what} of deployment ${this.binding} are served by the server thread, not from a replica thread`)
  }
}

registerBindingAdapter((binding, deployment) => (binding instanceof ServerDeployment ? binding.replicaSet(deployment) : undefined))

/** The env entries that let a replica thread call each deployment its server hosts. */
export function serverBindings(bindings: readonly string[], calls: ServerCalls): Record<string, ServerDeployment> {
  return Object.fromEntries(bindings.map((binding) => [binding, new ServerDeployment(binding, calls)]))
}
