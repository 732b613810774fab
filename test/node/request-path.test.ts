/**
 * How much of edgeserve one batched request runs through on Node, counted
 * by bench/request-path-count.ts with V8's precise coverage: at most 10 of
 * our files and 50 of our functions. The count runs in a process of its own,
 * on the source as Node loads it (the test runner transforms what it
 * imports, and coverage would name its copies).
 */
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { ROOT } from '../support/spawn-server.js'

const run = promisify(execFile)

describe('the request path', () => {
  it('one batched request runs through at most 10 of our files and 50 of our functions', { timeout: 60_000 }, async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'bench/request-path-count.ts'], { cwd: ROOT })
    const { files, functions, path } = JSON.parse(stdout.trim().split('\n').at(-1)!) as { files: number; functions: number; path: Record<string, string[]> }
    // The list, in the message, says where to look when a bound is passed.
    expect(files, JSON.stringify(path)).toBeLessThanOrEqual(10)
    expect(functions, JSON.stringify(path)).toBeLessThanOrEqual(50)
    // The request itself is on it: the ingress, the replica and the batch queue.
    expect(Object.keys(path)).toEqual(expect.arrayContaining(['http/ingress.ts', 'deployment/replica.ts', 'batching/queue.ts']))
  })
})
