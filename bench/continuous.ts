/**
 * Static against continuous batching for text generation, in one process:
 * 16 concurrent prompts with mixed generation lengths through the char LM,
 * at most 4 sequences per step (the tutorial's maxBatchSize), both with one
 * session.run per step for the active rows.
 *
 * Static (`batch.stream`, Ray Serve's streaming batches): a batch is fixed
 * when it starts and holds its slot until its longest sequence is done.
 * Continuous (`batch.continuous`): finished sequences leave and waiting ones
 * join between steps. Prints one JSON line.
 */
import { batch, endOfStream, type StreamStep } from '../src/index.js'
import { Tensor, loadModel, type Model } from '../src/onnx/node.js'
import modelBytes from '../examples/text-generator/model/bytes.js'
import { CONTEXT_LENGTH, INPUT_NAME, OUTPUT_NAME, contextWindow } from '../examples/text-generator/context.js'
import { argmax } from '../examples/text-generator/greedy.js'
import { newSequence, type Sequence } from '../examples/text-generator/sequence.js'
import { VOCAB_SIZE } from '../examples/text-generator/vocab.js'
import { median, percentile, quick } from './lib.js'

const PROMPTS = 16
const MAX_ACTIVE = 4
/** Mixed lengths: many short answers, a few long ones, interleaved. */
const LENGTHS = [8, 16, 128, 8, 32, 8, 64, 16, 8, 128, 16, 8, 32, 8, 64, 16]
const REPEATS = quick ? 3 : 7

/** Advance the sequences that still have tokens to generate: one session.run. */
async function step(model: Model, sequences: Sequence[]): Promise<(string | typeof endOfStream)[]> {
  const active = sequences.filter((s) => s.remaining > 0)
  if (active.length > 0) {
    const context = new BigInt64Array(active.length * CONTEXT_LENGTH)
    active.forEach((s, i) => contextWindow(s.ids, context, i * CONTEXT_LENGTH))
    const outputs = await model.run({ [INPUT_NAME]: new Tensor('int64', context, [active.length, CONTEXT_LENGTH]) })
    const logits = outputs[OUTPUT_NAME]!.data as Float32Array
    active.forEach((s, i) => {
      s.ids.push(argmax(logits, i * VOCAB_SIZE, VOCAB_SIZE))
      s.remaining--
    })
  }
  return sequences.map((s) => (active.includes(s) ? 't' : endOfStream))
}

function makeStatic(model: Model) {
  return batch.stream(
    async function* (sequences: Sequence[]): AsyncGenerator<StreamStep<string>> {
      while (sequences.some((s) => s.remaining > 0)) yield await step(model, sequences)
    },
    { maxBatchSize: MAX_ACTIVE },
  )
}

function makeContinuous(model: Model) {
  return batch.continuous((sequences: Sequence[]) => step(model, sequences), { maxBatchSize: MAX_ACTIVE })
}

async function runOnce(generate: (s: Sequence) => AsyncIterableIterator<string>) {
  const started = performance.now()
  const firstToken: number[] = []
  const finished: number[] = []
  let tokens = 0
  await Promise.all(
    LENGTHS.slice(0, PROMPTS).map(async (length, i) => {
      let first = true
      for await (const _token of generate(newSequence(`Prompt ${i}: Once upon a time`, length))) {
        tokens++
        if (first) {
          firstToken.push(performance.now() - started)
          first = false
        }
      }
      finished.push(performance.now() - started)
    }),
  )
  const elapsedMs = performance.now() - started
  return {
    tokensPerS: (tokens / elapsedMs) * 1000,
    ttftP50Ms: median(firstToken),
    ttftP95Ms: percentile(firstToken, 95),
    meanLatencyMs: finished.reduce((a, b) => a + b, 0) / finished.length,
    elapsedMs,
  }
}

const model = await loadModel(await modelBytes(), { numThreads: 1 })
const modes = { static: makeStatic(model), continuous: makeContinuous(model) }
await runOnce(modes.continuous) // warm-up: WebAssembly tiers up
type Run = Awaited<ReturnType<typeof runOnce>>
const results: Record<'static' | 'continuous', Run[]> = { static: [], continuous: [] }
for (let r = 0; r < REPEATS; r++) {
  for (const name of ['static', 'continuous'] as const) results[name].push(await runOnce(modes[name]))
}
const summary = Object.entries(results).map(([mode, runs]) => ({
  mode,
  prompts: PROMPTS,
  maxActive: MAX_ACTIVE,
  tokensPerS: median(runs.map((x) => x.tokensPerS)),
  ttftP50Ms: median(runs.map((x) => x.ttftP50Ms)),
  ttftP95Ms: median(runs.map((x) => x.ttftP95Ms)),
  meanLatencyMs: median(runs.map((x) => x.meanLatencyMs)),
  totalMs: median(runs.map((x) => x.elapsedMs)),
}))
console.log(JSON.stringify(summary))
