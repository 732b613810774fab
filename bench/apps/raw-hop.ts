/**
 * workerd's own hop into a Durable Object, with nothing of edgeserve on
 * either side: a Hono route that forwards the request to an object whose
 * fetch answers "ok". Its row sits between the bare route (/hello) and the
 * no-op deployment (/noop), so that the hop's cost splits into workerd's
 * and ours. Workers only: Node has no Durable Object namespace.
 */
import type { Hono } from 'hono'

interface Namespace {
  idFromName(name: string): unknown
  get(id: unknown): { fetch(request: Request): Promise<Response> }
}

export class RawNoOp {
  fetch(): Response {
    return new Response('ok')
  }
}

export function rawHopRoute(app: Hono): void {
  app.get('/raw-hop', (c) => {
    const namespace = (c.env as { RawNoOp: Namespace }).RawNoOp
    return namespace.get(namespace.idFromName('0')).fetch(c.req.raw)
  })
}
