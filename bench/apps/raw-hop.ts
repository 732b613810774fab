/**
 * workerd's own hop into a Durable Object, with nothing of edgeserve on
 * either side. Its rows sit beside the bare routes and the deployments, so
 * that a route's cost through an object splits into workerd's and ours:
 *
 * - `/raw-hop`: the GET forwarded with `stub.fetch` to an object answering "ok";
 * - `/raw-rpc`: the same answer by a Workers RPC call returning a string;
 * - `/raw-hop-json`: the house-price POST forwarded with `stub.fetch`; the
 *   object reads its JSON and answers a JSON prediction of 0.
 *
 * Workers only: Node has no Durable Object namespace.
 */
import { DurableObject } from 'cloudflare:workers'
import type { Hono } from 'hono'

interface RawStub {
  fetch(request: Request): Promise<Response>
  ok(): Promise<string>
}
interface Namespace {
  idFromName(name: string): unknown
  get(id: unknown): RawStub
}

export class RawNoOp extends DurableObject {
  override async fetch(request: Request): Promise<Response> {
    if (request.method !== 'POST') return new Response('ok')
    const body = (await request.json()) as { features?: unknown }
    if (!Array.isArray(body.features)) return Response.json({ error: 'features must be an array' }, { status: 400 })
    return Response.json({ prediction: 0 })
  }

  ok(): string {
    return 'ok'
  }
}

export function rawHopRoute(app: Hono): void {
  const stub = (env: unknown) => {
    const namespace = (env as { RawNoOp: Namespace }).RawNoOp
    return namespace.get(namespace.idFromName('0'))
  }
  app.get('/raw-hop', (c) => stub(c.env).fetch(c.req.raw))
  app.get('/raw-rpc', async (c) => c.text(await stub(c.env).ok()))
  app.post('/raw-hop-json', (c) => stub(c.env).fetch(c.req.raw))
}
