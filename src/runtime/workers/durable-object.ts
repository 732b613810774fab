import { DurableObject } from 'cloudflare:workers'
import type { Deployment } from '../../deployment/deployment.js'
import type { Outcome } from '../../deployment/outcome.js'
import { encodeStream, isAsyncIterable } from '../../deployment/stream-codec.js'
import { Replica, type ReplicaDescription, type ReplicaHealth } from '../../deployment/replica.js'
import type { MetricsSnapshot } from '../../metrics/registry.js'

/**
 * The Durable Object class that hosts one replica of `deployment`:
 *
 * ```ts
 * export const BatchAdder = durableObject(adder)   // wrangler.toml: class_name = "BatchAdder"
 * ```
 *
 * One object per replica (`idFromName("<name>/<i>")`), so concurrent requests
 * from every Worker isolate meet in one place and batch together. The user's
 * instance is created on the first request, not in the constructor: Workers
 * cap start-up at one second, and a model load would count against it.
 */
export function durableObject<D extends Deployment>(deployment: D) {
  return class EdgeServeReplica extends DurableObject<Record<string, unknown>> {
    private replica: Replica | undefined

    private host(): Replica {
      if (!this.replica) {
        const name = this.ctx.id.name ?? ''
        const index = Number(name.slice(name.lastIndexOf('/') + 1))
        this.replica = new Replica(deployment, Number.isInteger(index) ? index : 0, this.env)
      }
      return this.replica
    }

    override async fetch(request: Request): Promise<Response> {
      return this.host().fetch(request)
    }

    /** Handle calls (Workers RPC). Signals cannot cross RPC; the deadline does. */
    async invoke(method: string, args: unknown[], meta?: { deadline?: number }): Promise<Outcome> {
      const outcome = await this.host().call(method, args, { deadline: meta?.deadline })
      // An iterator cannot cross RPC; a byte stream can.
      if (outcome.ok && 'value' in outcome && isAsyncIterable(outcome.value)) return { ok: true, stream: encodeStream(outcome.value) }
      return outcome
    }

    async metrics(): Promise<MetricsSnapshot> {
      return this.host().metrics.snapshot()
    }

    async health(): Promise<ReplicaHealth> {
      return this.host().health()
    }

    async describe(): Promise<ReplicaDescription> {
      return this.host().describe()
    }

    /** For fault tests: reset this object as an eviction would. Reachable only through RPC. */
    async resetForTest(reason: string): Promise<void> {
      this.ctx.abort(reason)
    }
  }
}
