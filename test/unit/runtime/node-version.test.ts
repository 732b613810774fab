import { describe, expect, it } from 'vitest'

// package.json's engines say Node 22.12 or later: the suite must run on a
// supported Node, which npm's scripts take from the pinned `node` devDependency
// even where the machine's own Node is older.
describe('the Node the suite runs on', () => {
  it(`is 22.12 or later: ${process.version}`, () => {
    const [major, minor] = process.versions.node.split('.').map(Number) as [number, number]
    expect(major > 22 || (major === 22 && minor >= 12), `running on Node ${process.version}`).toBe(true)
  })
})
