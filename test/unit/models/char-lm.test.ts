import { readFileSync, statSync } from 'node:fs'
import * as ort from 'onnxruntime-web'
import { beforeAll, describe, expect, it } from 'vitest'
import { CONTEXT_LENGTH, INPUT_NAME, OUTPUT_NAME, contextWindow, encodeContext } from '../../../examples/text-generator/context.js'
import { argmax } from '../../../examples/text-generator/greedy.js'
import { PAD_ID, TOKENS, UNK_ID, VOCAB_SIZE, decode, decodeToken, encode } from '../../../examples/text-generator/vocab.js'
import { generateGreedy } from '../../../scripts/models/char-lm/generate.js'
import { PARAM_NAMES, forwardRow, makeRowState } from '../../../scripts/models/char-lm/model.js'
import { readFloatParams } from '../../../scripts/models/lib/onnx-reader.js'

ort.env.wasm.numThreads = 1

const modelDir = new URL('../../../examples/text-generator/model/', import.meta.url)
const modelUrl = new URL('char-lm.onnx', modelDir)
const bytes = new Uint8Array(readFileSync(modelUrl))
let session: ort.InferenceSession

beforeAll(async () => {
  session = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'] })
})

describe('vocabulary and context windows', () => {
  it('model/vocab.json is the table in vocab.ts, with the same context length', () => {
    const vocab = JSON.parse(readFileSync(new URL('vocab.json', modelDir), 'utf8')) as Record<string, unknown>
    expect(vocab.tokens).toEqual(TOKENS)
    expect(vocab.contextLength).toBe(CONTEXT_LENGTH)
    expect([vocab.padId, vocab.unkId]).toEqual([PAD_ID, UNK_ID])
    expect(VOCAB_SIZE).toBe(98)
  })

  it('round-trips ASCII text and maps anything else to <unk>', () => {
    const text = 'Alice said: "Oh dear!"\n~ {x} 42'
    expect(decode(encode(text))).toBe(text)
    expect(encode('é😀')).toEqual([UNK_ID, UNK_ID])
    expect(encode('a\r\nb')).toEqual(encode('a\nb'))
    expect([decodeToken(PAD_ID), decodeToken(UNK_ID), decodeToken(VOCAB_SIZE)]).toEqual(['', '\uFFFD', '\uFFFD'])
  })

  it('left-pads short prompts and keeps the last K characters of long ones', () => {
    const short = encodeContext('Hi')
    expect(short).toHaveLength(CONTEXT_LENGTH)
    expect(Array.from(short.subarray(0, CONTEXT_LENGTH - 2), Number).every((id) => id === PAD_ID)).toBe(true)
    expect(Array.from(short.subarray(-2), Number)).toEqual(encode('Hi'))
    const long = 'x'.repeat(40) + 'abcdefghijklmnop'
    expect(Array.from(encodeContext(long), Number)).toEqual(encode('abcdefghijklmnop'))
    expect(Array.from(encodeContext(''), Number)).toEqual(new Array(CONTEXT_LENGTH).fill(PAD_ID))
    const rows = new BigInt64Array(2 * CONTEXT_LENGTH)
    contextWindow(encode('Hi'), rows, CONTEXT_LENGTH)
    expect(rows.subarray(CONTEXT_LENGTH)).toEqual(short)
  })

  it('argmax picks the largest logit of its row, never <pad> or <unk>, lowest id on ties', () => {
    const logits = new Float32Array(2 * VOCAB_SIZE)
    logits[VOCAB_SIZE + PAD_ID] = 100
    logits[VOCAB_SIZE + UNK_ID] = 100
    logits[VOCAB_SIZE + 50] = 3
    logits[VOCAB_SIZE + 60] = 3
    expect(argmax(logits, VOCAB_SIZE, VOCAB_SIZE)).toBe(50)
    expect(argmax(logits, 0, VOCAB_SIZE)).toBe(2) // all zero: first allowed id
    expect(() => argmax(logits, VOCAB_SIZE + 1, VOCAB_SIZE)).toThrow(RangeError)
  })
})

describe('char-lm.onnx', () => {
  it('stays small enough to ship with the example', () => {
    expect(statSync(modelUrl).size).toBeLessThan(2 * 1024 * 1024)
  })

  it('computes the same logits as the TypeScript model over the weights in the file', async () => {
    const p = readFloatParams(bytes, PARAM_NAMES)
    const cfg = { vocab: VOCAB_SIZE, context: CONTEXT_LENGTH, embed: p.emb.length / VOCAB_SIZE, hidden: p.b1.length }
    const texts = ['Once upon a time', 'A', 'Alice was beginning to get very tired', '']
    const input = new BigInt64Array(texts.length * CONTEXT_LENGTH)
    texts.forEach((t, b) => input.set(encodeContext(t), b * CONTEXT_LENGTH))
    const result = await session.run({ [INPUT_NAME]: new ort.Tensor('int64', input, [texts.length, CONTEXT_LENGTH]) })
    const logits = result[OUTPUT_NAME]!
    expect(logits.dims).toEqual([texts.length, VOCAB_SIZE])
    const got = logits.data as Float32Array
    const state = makeRowState(cfg)
    texts.forEach((_, b) => {
      forwardRow(cfg, p, Array.from(input.subarray(b * CONTEXT_LENGTH, (b + 1) * CONTEXT_LENGTH), Number), state)
      for (let v = 0; v < VOCAB_SIZE; v++) expect(Math.abs(got[b * VOCAB_SIZE + v]! - state.logits[v]!)).toBeLessThan(1e-4)
    })
  })

  it('generates the same greedy text for prompts batched together as for each alone', async () => {
    const prompts = ['Once upon a time', 'Alice', 'The Wolf said to the Lamb, "', 'T', '', 'x'.repeat(40) + ' and then the']
    const chars = 60
    const batched = await generateGreedy(session, prompts, chars)
    expect(batched.runs).toBe(chars)
    for (const [i, prompt] of prompts.entries()) {
      const alone = await generateGreedy(session, [prompt], chars)
      expect(batched.texts[i], JSON.stringify(prompt)).toBe(alone.texts[0])
    }
    for (const text of batched.texts) {
      expect(text).toHaveLength(chars)
      expect(text).not.toContain('\uFFFD')
    }
  })

  it('continues a prompt with mostly lowercase letters and spaces, like its corpus', async () => {
    const { texts } = await generateGreedy(session, ['Alice was beginning to get very '], 30)
    // Mostly lowercase letters and spaces, as the corpus is.
    const letters = texts[0]!.replace(/[^a-z ]/g, '')
    expect(letters.length).toBeGreaterThan(20)
  })
})
