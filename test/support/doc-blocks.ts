/**
 * The code blocks of the README and the guides, as the docs tests read them.
 *
 * A fence's info string is its language, and optionally the name of the file
 * it is (```ts worker.ts). A block is identified by its document and the
 * heading it sits under (`docs/batching.md › Streaming`), with `#2`, `#3`
 * for the second and third block under one heading.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from './spawn-server.js'

export interface DocBlock {
  /** The document, relative to the repository: README.md, docs/batching.md. */
  doc: string
  /** 1-based line of the opening fence. */
  line: number
  heading: string
  id: string
  lang: string
  /** The file it is, when the fence names one. */
  name: string | undefined
  text: string
}

/** README.md and every guide under docs/. */
export function documents(): string[] {
  const guides = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
  return ['README.md', ...guides.map((name) => `docs/${name}`)]
}

export function docBlocks(doc: string): DocBlock[] {
  const lines = readFileSync(join(ROOT, doc), 'utf8').split('\n')
  const blocks: DocBlock[] = []
  const perHeading = new Map<string, number>()
  let heading = ''
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    const heads = /^#{1,6} (.+)$/.exec(line)
    if (heads) {
      heading = heads[1]!.trim()
      continue
    }
    const fence = /^```(\S*)(?:[ \t]+(\S+))?[ \t]*$/.exec(line)
    if (!fence) continue
    const start = i
    const body: string[] = []
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!)
    if (i >= lines.length) throw new Error(`${doc}:${start + 1}: a code fence that never closes`)
    const n = (perHeading.get(heading) ?? 0) + 1
    perHeading.set(heading, n)
    const id = `${doc} › ${heading}${n > 1 ? ` #${n}` : ''}`
    blocks.push({ doc, line: start + 1, heading, id, lang: fence[1] ?? '', name: fence[2], text: `${body.join('\n')}\n` })
  }
  return blocks
}

/** Blocks in TypeScript or JavaScript: the ones that are code a reader copies. */
export const isCode = (block: DocBlock) => ['ts', 'js', 'typescript', 'javascript', 'mjs'].includes(block.lang)

/**
 * The files a block runs with: every named block before it in its document
 * (the last of each name), the named blocks after it under the same heading
 * (a Worker's wrangler.toml, say), and the block itself, under its own name
 * or as `main.ts` / `main.mjs`.
 */
export function filesFor(block: DocBlock, all: DocBlock[]): { files: Map<string, string>; main: string } {
  const files = new Map<string, string>()
  for (const each of all) {
    if (each.doc !== block.doc || !each.name) continue
    if (each.line < block.line || each.heading === block.heading) files.set(each.name, each.text)
  }
  const main = block.name ?? (block.lang === 'js' || block.lang === 'javascript' || block.lang === 'mjs' ? 'main.mjs' : 'main.ts')
  files.set(main, block.text)
  return { files, main }
}
