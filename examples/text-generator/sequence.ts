import { HTTPError } from 'edgeserve'
import { encode } from './vocab.js'

export const MAX_PROMPT_CHARS = 2000
export const DEFAULT_NEW_TOKENS = 64
export const MAX_NEW_TOKENS = 256

/**
 * One prompt being generated: the state continuous batching keeps per item.
 * `ids` grows by one token per step, until `remaining` reaches zero.
 */
export interface Sequence {
  ids: number[]
  remaining: number
}

export function newSequence(prompt: string, maxNewTokens = DEFAULT_NEW_TOKENS): Sequence {
  return { ids: encode(prompt), remaining: maxNewTokens }
}

/** The prompt and token budget of a request: `?text=...&maxTokens=N`. */
export function parsePrompt(url: URL): { text: string; maxNewTokens: number } {
  const text = url.searchParams.get('text')
  if (text === null) throw new HTTPError(400, 'missing query parameter "text", e.g. /?text=Once+upon+a+time')
  if (text.length > MAX_PROMPT_CHARS) {
    throw new HTTPError(413, `"text" is ${text.length} characters; at most ${MAX_PROMPT_CHARS} are accepted`)
  }
  const raw = url.searchParams.get('maxTokens')
  if (raw === null) return { text, maxNewTokens: DEFAULT_NEW_TOKENS }
  if (!/^\d{1,4}$/.test(raw) || Number(raw) < 1 || Number(raw) > MAX_NEW_TOKENS) {
    throw new HTTPError(400, `"maxTokens" must be an integer from 1 to ${MAX_NEW_TOKENS}, received ${JSON.stringify(raw.slice(0, 20))}`)
  }
  return { text, maxNewTokens: Number(raw) }
}
