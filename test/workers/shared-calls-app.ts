/**
 * A deployment whose object records the requests of each shared call it
 * receives, for test/workers/shared-calls.test.ts.
 */
import { Hono } from 'hono'
import { deployment, ingress } from 'edgeserve'
import { durableObject, type CarriedRequest } from 'edgeserve/workers'

/** Answers `echo <id>` after `ms`, or echoes a POST's body. */
class Echo {
  async fetch(request: Request) {
    const url = new URL(request.url)
    await new Promise((resolve) => setTimeout(resolve, Number(url.searchParams.get('ms') ?? 0)))
    return request.method === 'POST' ? `echo ${await request.text()}` : `echo ${url.searchParams.get('id')}`
  }
}

const echo = deployment(Echo, { name: 'SharedEcho' })

/** Records each shared call's requests by their id (or body), in the order the call carried them: a test hook. */
export class SharedEcho extends durableObject(echo) {
  readonly #calls: string[][] = []

  override async fetchMany(requests: CarriedRequest[]) {
    this.#calls.push(requests.map((request) => new URL(request.url).searchParams.get('id') ?? new TextDecoder().decode(request.body ?? undefined)))
    return super.fetchMany(requests)
  }

  async callsForTest(): Promise<string[][]> {
    return this.#calls
  }
}

export const sharedCallsApp = new Hono<{ Bindings: { SharedEcho: { idFromName(name: string): unknown; get(id: unknown): unknown } } }>()
  .get('/shared/echo', ingress(echo))
  .post('/shared/echo', ingress(echo))
  .get('/shared/calls', async (c) => {
    const stub = c.env.SharedEcho.get(c.env.SharedEcho.idFromName('SharedEcho/0')) as { callsForTest(): Promise<string[][]> }
    return c.json(await stub.callsForTest())
  })
