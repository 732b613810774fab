/**
 * Streams of results across a boundary that only carries bytes (Durable
 * Object RPC, HTTP): one JSON value per line (NDJSON), and an error line if
 * the stream fails. Closing the reading side cancels the source iterator,
 * so a caller that stops listening frees its slot in the batch.
 */
import { errorFromJson, errorJson, type ErrorJson } from '../errors.js'

export function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === 'object' && value !== null && Symbol.asyncIterator in value
}

export function encodeStream(source: AsyncIterable<unknown>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  const iterator = source[Symbol.asyncIterator]()
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await iterator.next()
        if (next.done) controller.close()
        else controller.enqueue(encoder.encode(JSON.stringify({ value: next.value }) + '\n'))
      } catch (error) {
        controller.enqueue(encoder.encode(JSON.stringify({ error: errorJson(error) }) + '\n'))
        controller.close()
      }
    },
    async cancel() {
      await iterator.return?.()
    },
  })
}

export async function* decodeStream(stream: ReadableStream<Uint8Array>): AsyncGenerator<unknown> {
  const reader = stream.getReader()
  const decoder = new TextDecoder()
  let buffered = ''
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      buffered += decoder.decode(value, { stream: true })
      let newline: number
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = JSON.parse(buffered.slice(0, newline)) as { value?: unknown; error?: ErrorJson }
        buffered = buffered.slice(newline + 1)
        if (line.error) throw errorFromJson(line.error)
        yield line.value
      }
    }
  } finally {
    // Reached on break, return() or error: tell the source to stop.
    await reader.cancel().catch(() => undefined)
  }
}
