/**
 * Verify the exported char-lm with onnxruntime-web and print samples.
 *
 *   npx tsx scripts/models/char-lm/verify.ts [--dir <dir with char-lm.onnx and vocab.json>] [--chars 120]
 *
 * Exits non-zero unless:
 *  1. vocab.json matches examples/text-generator/vocab.ts and context.ts;
 *  2. ORT logits equal the TypeScript forward pass (weights read back from
 *     the .onnx file) within 1e-4;
 *  3. greedy generation of prompts of different lengths in ONE batch (one
 *     session.run per step) is identical to generating each prompt alone.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { CONTEXT_LENGTH, INPUT_NAME, OUTPUT_NAME, encodeContext } from '../../../examples/text-generator/context.js'
import { TOKENS, VOCAB_SIZE } from '../../../examples/text-generator/vocab.js'
import { readFloatParams } from '../lib/onnx-reader.js'
import { createSession, ort, outputTensor } from '../lib/ort-session.js'
import { generateGreedy } from './generate.js'
import { PARAM_NAMES, forwardRow, makeRowState, type CharMlpConfig } from './model.js'

const { values } = parseArgs({
  options: {
    dir: { type: 'string', default: fileURLToPath(new URL('../../../examples/text-generator/model/', import.meta.url)) },
    chars: { type: 'string', default: '120' },
  },
})
const dir = values.dir
const maxNewChars = Number(values.chars)
let failed = false
const check = (ok: boolean, label: string): void => {
  failed ||= !ok
  console.log(`${ok ? 'OK  ' : 'FAIL'} ${label}`)
}

const bytes = new Uint8Array(readFileSync(join(dir, 'char-lm.onnx')))
const vocab = JSON.parse(readFileSync(join(dir, 'vocab.json'), 'utf8')) as { contextLength: number; tokens: string[] }
check(JSON.stringify(vocab.tokens) === JSON.stringify(TOKENS) && vocab.contextLength === CONTEXT_LENGTH, 'vocab.json matches vocab.ts and context.ts')

const session = await createSession(bytes)

// --- ORT vs TypeScript forward ----------------------------------------------
{
  const p = readFloatParams(bytes, PARAM_NAMES)
  const cfg: CharMlpConfig = { vocab: VOCAB_SIZE, context: CONTEXT_LENGTH, embed: p.emb.length / VOCAB_SIZE, hidden: p.b1.length }
  const texts = ['Once upon a time', 'A', 'Alice was beginning to get very tired of sitting', 'The Fox and the']
  const input = new BigInt64Array(texts.length * CONTEXT_LENGTH)
  texts.forEach((t, b) => input.set(encodeContext(t), b * CONTEXT_LENGTH))
  const out = await session.run({ [INPUT_NAME]: new ort.Tensor('int64', input, [texts.length, CONTEXT_LENGTH]) })
  const got = outputTensor(out, OUTPUT_NAME).data as Float32Array
  const s = makeRowState(cfg)
  let maxDiff = 0
  for (let b = 0; b < texts.length; b++) {
    forwardRow(cfg, p, Array.from(input.subarray(b * CONTEXT_LENGTH, (b + 1) * CONTEXT_LENGTH), Number), s)
    for (let v = 0; v < VOCAB_SIZE; v++) maxDiff = Math.max(maxDiff, Math.abs(got[b * VOCAB_SIZE + v]! - s.logits[v]!))
  }
  check(maxDiff <= 1e-4, `forward: max |onnx - ts| logits = ${maxDiff.toExponential(2)}`)
}

// --- batched vs one-by-one greedy generation --------------------------------
const prompts = ['Once upon a time', 'Alice', 'The Wolf said to the Lamb, "', 'T', '']
const batched = await generateGreedy(session, prompts, maxNewChars)
const single: string[] = []
for (const p of prompts) single.push((await generateGreedy(session, [p], maxNewChars)).texts[0] ?? '')
check(
  batched.runs === maxNewChars && batched.texts.every((t, i) => t === single[i]),
  `greedy batch of ${prompts.length} in ${batched.runs} session.run calls equals one-by-one`,
)
prompts.forEach((p, i) => console.log(`  ${JSON.stringify(p)} -> ${JSON.stringify(batched.texts[i])}`))
if (failed) process.exit(1)
