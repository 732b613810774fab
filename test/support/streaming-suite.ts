/**
 * Streaming and continuous batching, end to end, shared by the Node and
 * workerd test files: Server-Sent Events over HTTP, and streams through
 * handles (in-process on Node, NDJSON over Durable Object RPC on Workers).
 */
import { describe, expect, it } from 'vitest'

export interface StreamTarget {
  baseUrl(): string
  /** Tokens of `text` through a handle, stopping after `take` if given. */
  viaHandle(text: string, maxTokens: number, take?: number): Promise<string[]>
}

/** Read an SSE response, recording each token with the time it arrived. */
async function readEvents(response: Response, onToken?: (token: string) => boolean | void): Promise<string[]> {
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  const tokens: string[] = []
  let buffered = ''
  for (;;) {
    const { done, value } = await reader.read()
    if (done) return tokens
    buffered += decoder.decode(value, { stream: true })
    let end: number
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const event = buffered.slice(0, end)
      buffered = buffered.slice(end + 2)
      if (event.startsWith('event: end')) return tokens
      const token = JSON.parse(event.replace(/^data: /, '')) as string
      tokens.push(token)
      if (onToken?.(token) === false) {
        await reader.cancel()
        return tokens
      }
    }
  }
}

export function describeStreaming(runtime: string, target: StreamTarget): void {
  const sse = (text: string, maxTokens: number, init?: RequestInit) =>
    fetch(`${target.baseUrl()}/generate/stream?text=${encodeURIComponent(text)}&maxTokens=${maxTokens}`, init)

  describe(`streaming and continuous batching on ${runtime}`, () => {
    it('a short request sent while a long one runs gets its first token before the long one ends', async () => {
      const order: string[] = []
      let shortStarted: Promise<string[]> | undefined
      const long = readEvents(await sse('Once upon a time', 256), () => {
        order.push('long')
        // Send the short request once the long one is under way.
        if (!shortStarted) {
          shortStarted = sse('Alice', 4).then((r) => readEvents(r, () => void order.push('short')))
        }
      })
      const [longTokens, shortTokens] = await Promise.all([long, long.then(() => shortStarted!)])
      expect(longTokens).toHaveLength(256)
      expect(shortTokens).toHaveLength(4)
      expect(order.indexOf('short')).toBeGreaterThan(-1)
      expect(order.indexOf('short')).toBeLessThan(order.lastIndexOf('long'))
    })

    it('a stream through a handle gives the same tokens as the SSE route', async () => {
      const viaSse = await readEvents(await sse('The Wolf said', 20))
      const viaHandle = await target.viaHandle('The Wolf said', 20)
      expect(viaHandle).toEqual(viaSse)
    })

    it('a client that disconnects mid-stream frees its slot for a waiting request', async () => {
      // maxBatchSize is 4: four endless streams fill the batch.
      const controllers = Array.from({ length: 4 }, () => new AbortController())
      const ended = [false, false, false, false]
      const firstTokens = controllers.map(
        (controller, i) =>
          new Promise<void>((resolve) => {
            void sse('Once upon a time', 256, { signal: controller.signal })
              .then((r) => readEvents(r, () => resolve()))
              .then(() => (ended[i] = true))
              .catch(() => undefined)
          }),
      )
      await Promise.all(firstTokens)
      const waiting = sse('Alice', 3).then((r) => readEvents(r))
      await new Promise((resolve) => setTimeout(resolve, 50))
      controllers[0]!.abort() // one reader leaves: its slot goes to the waiting request
      const tokens = await waiting
      expect(tokens).toHaveLength(3)
      // It was served while the other long streams still ran, not after them.
      expect(ended.slice(1)).toEqual([false, false, false])
      for (const controller of controllers) controller.abort()
    })

    it('a handle reader that stops early frees its slot too', async () => {
      const partial = await target.viaHandle('Once upon a time', 256, 2)
      expect(partial).toHaveLength(2)
      const full = await Promise.all([1, 2, 3, 4, 5].map(() => target.viaHandle('Alice', 3)))
      expect(full.every((t) => t.length === 3)).toBe(true)
    })
  })
}
