/**
 * Durable Objects that refuse requests as an overloaded object does, for
 * test/workers/overload.test.ts.
 *
 * A stand-in for the platform's overload: Cloudflare's runtime refuses a
 * request at an object's queue (past about 1,000 requests/s, or too many or
 * too slow requests queued), but local workerd never does; those limits are
 * not in workerd's open source, which runs objects without a limit enforcer.
 * So replica 0 of each deployment here throws the error Cloudflare documents,
 * marked `overloaded: true`. workerd turns a thrown error so marked into its
 * own OVERLOADED kind, and the caller's `stub.fetch()` or RPC call rejects
 * with `.overloaded` set: the same path and the same mark as the platform's.
 */
import { Hono } from 'hono'
import { deployment, getHandle, ingress, replicaContext, type Deployment } from 'edgeserve'
import { durableObject } from 'edgeserve/workers'

/** Cloudflare's text for the commonest overload (developers.cloudflare.com/durable-objects/observability/troubleshooting). */
export const OVERLOAD_MESSAGE = 'Durable Object is overloaded. Too many requests queued.'

/** Says which replica answered, and echoes a POST's body. */
class WhichReplica {
  readonly replica = replicaContext().replica

  async fetch(request: Request) {
    return { replica: this.replica, body: request.method === 'POST' ? await request.text() : null }
  }

  which() {
    return this.replica
  }
}

const pair = deployment(WhichReplica, { name: 'OverloadedPair', numReplicas: 2 })
const alone = deployment(WhichReplica, { name: 'OverloadedAlone', numReplicas: 1 })

/** The class hosting `d`, whose replica 0 refuses every request and call as overloaded, and counts them. */
function refusingAtReplicaZero(d: Deployment) {
  return class extends durableObject(d) {
    readonly #refuses = this.ctx.id.name === `${d.name}/0`
    #refused = 0

    override async fetch(request: Request): Promise<Response> {
      if (this.#refuses) throw this.#overloaded()
      return super.fetch(request)
    }

    override async invoke(...args: Parameters<InstanceType<ReturnType<typeof durableObject>>['invoke']>) {
      if (this.#refuses) throw this.#overloaded()
      return super.invoke(...args)
    }

    // The platform refuses a call at the object's queue whatever it carries: a gathered call too.
    override async carry(...args: Parameters<InstanceType<ReturnType<typeof durableObject>>['carry']>) {
      if (this.#refuses) throw this.#overloaded()
      return super.carry(...args)
    }

    async refusedForTest(): Promise<number> {
      return this.#refused
    }

    #overloaded(): Error {
      this.#refused++
      return Object.assign(new Error(OVERLOAD_MESSAGE), { overloaded: true })
    }
  }
}

export const OverloadedPair = refusingAtReplicaZero(pair)
export const OverloadedAlone = refusingAtReplicaZero(alone)

interface RefusingStub {
  fetch(request: Request): Promise<Response>
  refusedForTest(): Promise<number>
}
type Namespace = { idFromName(name: string): unknown; get(id: unknown): RefusingStub }
const replicaZero = (env: Record<string, unknown>, name = 'OverloadedPair') => {
  const namespace = env[name] as Namespace
  return namespace.get(namespace.idFromName(`${name}/0`))
}

export const overloadApp = new Hono<{ Bindings: Record<string, unknown> }>()
  .on(['GET', 'POST'], '/overloaded/pair', ingress(pair))
  .on(['GET', 'POST'], '/overloaded/alone', ingress(alone))
  .get('/overloaded/pair/call', async (c) => c.json({ replica: await getHandle(pair, c.env).which.remote() }))
  .get('/overloaded/pair/refused', async (c) => c.json(await replicaZero(c.env).refusedForTest()))
  // How many calls the lone replica refused: a gathered call is refused once, whatever it carries.
  .get('/overloaded/alone/refused', async (c) => c.json(await replicaZero(c.env, 'OverloadedAlone').refusedForTest()))
  // What a caller of stub.fetch() sees of the stand-in's error, as workerd hands it over.
  .get('/overloaded/raw', async (c) => {
    try {
      await replicaZero(c.env).fetch(new Request('http://do/overloaded'))
      return c.json({ thrown: false })
    } catch (error) {
      const { message, overloaded, retryable, remote } = error as Error & Record<string, unknown>
      return c.json({ thrown: true, message, overloaded, retryable, remote })
    }
  })
