/**
 * The test Worker served by workerd itself (bench/workerd-direct.ts), with
 * nothing in front of it, for the tests of one file: workerd's own socket
 * notices a client that resets its connection, where wrangler's proxy
 * passes nothing on, and takes a body as the client sends it.
 */
import { afterAll, beforeAll } from 'vitest'
import { startInGroup, type GroupChild } from './process-group.js'

/** Starts before the file's tests and stops after them; `url` is set once it listens. */
export function workerdDirectForTests(config = 'test/workers/wrangler.toml'): { readonly url: string } {
  let server: GroupChild | undefined
  const served = { url: '' }
  beforeAll(async () => {
    server = await startInGroup([process.execPath, 'node_modules/tsx/dist/cli.mjs', 'bench/workerd-direct.ts', config], /READY (http:\/\/\S+)/)
    served.url = server.match[1]!
  })
  afterAll(async () => {
    await server?.stop()
  })
  return served
}
