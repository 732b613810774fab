import { batch, deployment, endOfStream } from 'edgeserve'
import { Tensor } from 'edgeserve/onnx'
import { lazyModel } from '../shared/lazy-model.js'
import modelBytes from '#example-model/text-generator'
import { CONTEXT_LENGTH, INPUT_NAME, OUTPUT_NAME, contextWindow } from './context.js'
import { argmax } from './greedy.js'
import { newSequence, parsePrompt, type Sequence } from './sequence.js'
import { VOCAB_SIZE, decodeToken } from './vocab.js'
import { eventStream } from './sse.js'

/**
 * The BatchTextGenerator of Ray Serve's "Serve a Text Generator with Request Batching" tutorial, with a character-level language model
 * built by scripts/models/char-lm (Ray's tutorial uses GPT-2 from a hub;
 * nothing is downloaded here).
 *
 * Decoding is continuously batched: each step runs the model once for every
 * active prompt (at most 4, as in the tutorial), a new prompt joins at the next
 * step, and a finished one leaves, so a short request never waits for a long
 * one. Left-padded context windows make every row independent, so a prompt's
 * continuation is the same whatever shares its batch.
 */
export class BatchTextGenerator {
  /** Loaded on first use (Workers cap start-up at one second). */
  readonly #model = lazyModel(modelBytes)

  /** Ray's `.bind("text-generation", "gpt2")`: the task and model names. */
  constructor(
    readonly task = 'text-generation',
    readonly modelName = 'char-lm',
    /**
     * `stepDelayMs` paces decoding: a pause after each step, as a larger
     * model's step would take. This model steps in well under a millisecond,
     * so tests that watch requests overlap bind a few milliseconds here.
     */
    readonly options: { stepDelayMs?: number } = {},
  ) {}

  async checkHealth(): Promise<boolean> {
    await this.#model()
    return true
  }

  /** One token per active sequence per step. */
  generateTokens = batch.continuous(
    async (sequences: Sequence[]) => {
      const active = sequences.filter((s) => s.remaining > 0)
      const tokens = new Map<Sequence, string>()
      if (active.length > 0) {
        const model = await this.#model()
        const context = new BigInt64Array(active.length * CONTEXT_LENGTH)
        active.forEach((s, i) => contextWindow(s.ids, context, i * CONTEXT_LENGTH))
        const outputs = await model.run({ [INPUT_NAME]: new Tensor('int64', context, [active.length, CONTEXT_LENGTH]) })
        const logits = outputs[OUTPUT_NAME]!.data as Float32Array
        active.forEach((s, i) => {
          const id = argmax(logits, i * VOCAB_SIZE, VOCAB_SIZE)
          s.ids.push(id)
          s.remaining--
          tokens.set(s, decodeToken(id))
        })
      }
      if (this.options.stepDelayMs) await new Promise((resolve) => setTimeout(resolve, this.options.stepDelayMs))
      return sequences.map((s) => tokens.get(s) ?? endOfStream)
    },
    { maxBatchSize: 4 },
  )

  /**
   * The continuation of `text`, token by token: through a handle,
   * `for await (const token of handle.stream.remote('Once upon a time'))`.
   */
  stream(text: string, maxNewTokens?: number): AsyncIterableIterator<string> {
    return this.generateTokens(newSequence(String(text), maxNewTokens))
  }

  /** The continuation of `text` (Ray's `handle_batch`, one prompt per call). */
  async handleBatch(text: string, maxNewTokens?: number): Promise<string> {
    let continuation = ''
    for await (const token of this.generateTokens(newSequence(String(text), maxNewTokens))) continuation += token
    return continuation
  }

  /** `GET /?text=...` returns the continuation; `.../stream` streams it as Server-Sent Events. */
  async fetch(request: Request): Promise<string | Response> {
    const url = new URL(request.url)
    const { text, maxNewTokens } = parsePrompt(url)
    if (url.pathname.endsWith('/stream') || request.headers.get('accept') === 'text/event-stream') {
      return eventStream(this.generateTokens(newSequence(text, maxNewTokens)))
    }
    return this.handleBatch(text, maxNewTokens)
  }
}

export const textGenerator = deployment(BatchTextGenerator).bind('text-generation', 'char-lm')
