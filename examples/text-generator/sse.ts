/**
 * Server-Sent Events from an async iterator of tokens: one `data:` event per
 * token (JSON-encoded, so newlines survive), then an `end` event.
 *
 * The first token is awaited before the response starts, so a request the
 * queue refuses (503) or that times out still gets a proper status code. A
 * client that disconnects cancels the stream, which closes the iterator and
 * frees its slot in the batch.
 */
export async function eventStream(tokens: AsyncIterableIterator<string>): Promise<Response> {
  const encoder = new TextEncoder()
  const first = await tokens.next()
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      if (first.done) {
        controller.enqueue(encoder.encode('event: end\ndata: {}\n\n'))
        controller.close()
      } else controller.enqueue(encoder.encode(`data: ${JSON.stringify(first.value)}\n\n`))
    },
    async pull(controller) {
      try {
        const next = await tokens.next()
        if (next.done) {
          controller.enqueue(encoder.encode('event: end\ndata: {}\n\n'))
          controller.close()
        } else controller.enqueue(encoder.encode(`data: ${JSON.stringify(next.value)}\n\n`))
      } catch (error) {
        controller.enqueue(encoder.encode(`event: error\ndata: ${JSON.stringify({ message: (error as Error).message })}\n\n`))
        controller.close()
      }
    },
    async cancel() {
      await tokens.return?.()
    },
  })
  return new Response(body, {
    headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' },
  })
}
