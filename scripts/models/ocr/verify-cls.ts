/**
 * Run PaddleOCR's direction classifier on the OCR fixtures.
 *
 *   npx tsx scripts/models/ocr/verify-cls.ts [--fixtures <dir>] [--model <cls.onnx>]
 *
 * Goes through the path a server takes: file bytes -> pure-JS decode ->
 * PaddleOCR cls preprocessing -> onnxruntime-web -> postprocessing. Exits 1
 * unless every fixture gets its expected angle with a confidence above
 * PaddleOCR's default cls_thresh of 0.9. Also prints, for information only,
 * results for more strings and render sizes.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { decodeImage, type DecodedImage } from '../../../examples/ocr-direction/image.js'
import { PADDLE_CLS_THRESH, clsPostprocessBatch, type ClsResult } from '../../../examples/ocr-direction/postprocess.js'
import { clsPreprocessBatch } from '../../../examples/ocr-direction/preprocess.js'
import { createSession, ort, outputTensor } from '../lib/ort-session.js'
import { defaultClsModelPath } from './cls-model-path.js'
import type { OcrManifest } from './fixtures.js'
import { renderTextLine, rotate180 } from './render-text.js'

const { values } = parseArgs({
  options: {
    fixtures: { type: 'string', default: fileURLToPath(new URL('../../../test/fixtures/ocr/', import.meta.url)) },
    model: { type: 'string' },
  },
})
const fixtures = values.fixtures
const session = await createSession(values.model ?? defaultClsModelPath())
const inputName = session.inputNames[0] ?? 'x'
const outputName = session.outputNames[0] ?? 'softmax_0.tmp_0'

async function classify(images: DecodedImage[]): Promise<ClsResult[]> {
  const { data, dims } = clsPreprocessBatch(images)
  const out = await session.run({ [inputName]: new ort.Tensor('float32', data, dims) })
  return clsPostprocessBatch(outputTensor(out, outputName).data as Float32Array, images.length)
}

// --- fixtures from disk: batched and one at a time must agree ---------------
const manifest = JSON.parse(readFileSync(join(fixtures, 'manifest.json'), 'utf8')) as OcrManifest
const decoded = manifest.images.map((m) => decodeImage(new Uint8Array(readFileSync(join(fixtures, m.file)))))
const batched = await classify(decoded)
let failed = false
for (const [i, m] of manifest.images.entries()) {
  const [single] = await classify([decoded[i]!])
  const r = batched[i]!
  const ok = r.angle === m.angle && r.confidence > PADDLE_CLS_THRESH && Math.abs((single?.confidence ?? 0) - r.confidence) < 1e-5
  failed ||= !ok
  console.log(
    `${ok ? 'OK  ' : 'FAIL'} ${m.file.padEnd(40)} expected ${String(m.angle).padStart(3)}  got ${String(r.angle).padStart(3)} ` +
      `conf ${r.confidence.toFixed(4)} (alone ${single?.confidence.toFixed(4)})`,
  )
}

// --- for information: more strings and render sizes, in memory ---------------
const extra = [
  'The quick brown fox 12345',
  'Pack my box with five dozen liquor jugs',
  'Total: 42.50',
  'ABC DEF 789',
  'Sphinx of black quartz, judge my vow',
  // Almost every letter has a descender, so upside down it resembles upright
  // text with ascenders: a known hard case, reported but not asserted.
  'jumping gypsy quay',
]
console.log('\nin-memory strings (upright / rotated):')
for (const scale of [2, 3, 4]) {
  const imgs = extra.flatMap((t) => {
    const upright = renderTextLine(t, { scale, bold: scale > 2 ? 1 : 0, margin: 2 * scale })
    return [upright, rotate180(upright)]
  })
  const res = await classify(imgs)
  extra.forEach((text, i) => {
    const up = res[2 * i]!
    const rot = res[2 * i + 1]!
    const right = up.angle === 0 && rot.angle === 180
    console.log(
      `  scale ${scale} ${right ? 'right' : 'WRONG'} ${JSON.stringify(text).padEnd(42)} ` +
        `upright ${up.angle}@${up.confidence.toFixed(3)}  rotated ${rot.angle}@${rot.confidence.toFixed(3)}`,
    )
  })
}
if (failed) process.exit(1)
