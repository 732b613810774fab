import { SSEStreamingApi } from 'hono/streaming'
import { errorJson } from 'edgeserve'

/**
 * Server-Sent Events from an async iterator of tokens, framed by Hono's
 * `SSEStreamingApi`: one `data:` event per token (JSON-encoded, so newlines
 * survive), then an `end` event; a failure mid-stream ends it with an
 * `error` event whose data is the same `{ "error": { "type", "message" } }`
 * every other answer uses.
 *
 * The first token is awaited before the response starts, so a request the
 * queue refuses (503) or that times out still gets a proper status code.
 * (Hono's `streamSSE` wants a route's Context and sends an error's raw
 * message; a deployment's `fetch` has a Request, hence the API underneath.)
 * Writes wait for the client to read, and a client that disconnects aborts
 * the stream, which closes the iterator and frees its slot in the batch.
 */
export async function eventStream(tokens: AsyncIterableIterator<string>): Promise<Response> {
  const first = await tokens.next()
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>()
  const sse = new SSEStreamingApi(writable, readable)
  sse.onAbort(async () => {
    await tokens.return?.()
  })
  void relay(sse, tokens, first)
  return new Response(sse.responseReadable, {
    headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' },
  })
}

async function relay(sse: SSEStreamingApi, tokens: AsyncIterableIterator<string>, first: IteratorResult<string>): Promise<void> {
  try {
    for (let next = first; !next.done; next = await tokens.next()) {
      if (sse.aborted) return
      await sse.writeSSE({ data: JSON.stringify(next.value) })
    }
    await sse.writeSSE({ event: 'end', data: '{}' })
  } catch (error) {
    const { type, message } = errorJson(error)
    await sse.writeSSE({ event: 'error', data: JSON.stringify({ error: { type, message } }) })
  } finally {
    await sse.close()
  }
}
