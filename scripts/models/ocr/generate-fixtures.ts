/**
 * Write the OCR direction-classifier test images and their manifest.
 *
 *   npx tsx scripts/models/ocr/generate-fixtures.ts [--out <dir>]
 *
 * <out> defaults to test/fixtures/ocr/. See fixtures.ts for what is drawn.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { buildOcrFixtures } from './fixtures.js'

const { values } = parseArgs({
  options: { out: { type: 'string', default: fileURLToPath(new URL('../../../test/fixtures/ocr/', import.meta.url)) } },
})
const outDir = values.out
mkdirSync(outDir, { recursive: true })

const { files, manifest } = buildOcrFixtures()
for (const [file, bytes] of files) writeFileSync(join(outDir, file), bytes)
for (const m of manifest.images) {
  console.log(`${m.file.padEnd(40)} ${m.width}x${m.height}  ${m.bytes} B  angle ${m.angle}`)
}
console.log(`wrote ${files.size} files to ${outDir}`)
