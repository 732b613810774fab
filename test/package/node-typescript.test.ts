/**
 * The README's "Node, in TypeScript" section as a reader follows it, word for
 * word, in an empty directory: its setup commands (with the packed tarball
 * for `edgeserve`), its server.ts, and its `npx tsx server.ts`.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { readmeProject, startIn, type Project } from './lib/consumer.js'

let project: Project
let then: string[]

beforeAll(async () => {
  ;({ project, then } = await readmeProject('Node, in TypeScript', 'readme-node-typescript'))
})

describe('the README’s Node TypeScript section, word for word', () => {
  it('makes an ES module project, which the server’s top-level await needs', () => {
    const manifest = JSON.parse(readFileSync(join(project.dir, 'package.json'), 'utf8')) as { type?: string; devDependencies?: Record<string, string> }
    expect(manifest.type).toBe('module')
    expect(Object.keys(manifest.devDependencies ?? {})).toContain('tsx')
    expect(then).toEqual(['npx tsx server.ts'])
  })

  it('`npx tsx server.ts` serves the adder, and a bad number gets a 400 JSON error', async () => {
    const server = await startIn(project, ['npx', '--no', 'tsx', 'server.ts'], /listening on (http:\/\/127\.0\.0\.1:\d+)/, { PORT: '0' })
    try {
      const base = server.match[1]!
      expect(await (await fetch(`${base}/adder?number=41`)).text()).toBe('42')
      for (const query of ['?number=x', '']) {
        const bad = await fetch(`${base}/adder${query}`)
        expect([bad.status, await bad.json()]).toEqual([400, { error: { type: 'HTTPError', message: 'number must be an integer' } }])
      }
    } finally {
      await server.stop()
    }
  })
})
