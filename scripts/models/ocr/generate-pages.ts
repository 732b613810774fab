/**
 * Write the OCR pipeline's accuracy pages and their manifest.
 *
 *   npx tsx scripts/models/ocr/generate-pages.ts [--out <dir>]
 *
 * <out> defaults to test/fixtures/ocr-pages/. See pages.ts for what is drawn.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { buildPageFixtures } from './pages.js'

const { values } = parseArgs({
  options: { out: { type: 'string', default: fileURLToPath(new URL('../../../test/fixtures/ocr-pages/', import.meta.url)) } },
})
const outDir = values.out
mkdirSync(outDir, { recursive: true })
const { files, pages } = buildPageFixtures()
for (const [file, bytes] of files) writeFileSync(join(outDir, file), bytes)
for (const page of pages) console.log(`${page.file.padEnd(22)} ${page.width}x${page.height}  ${files.get(page.file)!.length} B`)
console.log(`wrote ${files.size} files to ${outDir}`)
