import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startInGroup, type GroupChild } from '../support/process-group.js'
import { waitFor } from '../support/wait-for.js'

/**
 * bench/workerd-direct.ts, which the bench's direct workerd rows are measured
 * against: the bench's Worker served by workerd itself from a config the
 * script writes (modules, Durable Object classes, the model's data module),
 * and no workerd left running once the script is stopped.
 */
describe('the bench on workerd directly', () => {
  let server: GroupChild
  let url: string

  beforeAll(async () => {
    server = await startInGroup([process.execPath, 'node_modules/tsx/dist/cli.mjs', 'bench/workerd-direct.ts'], /READY (http:\/\/\S+)/, {
      MINIFLARE_WORKERD_V8_FLAGS: '--initial-old-space-size=8',
    })
    url = server.match[1]!
  })

  afterAll(async () => {
    await server?.stop()
  })

  it('serves the bare route, a deployment in a Durable Object and a model from its config', async () => {
    expect(await (await fetch(`${url}/hello`)).text()).toBe('ok')
    expect(await (await fetch(`${url}/noop`)).text()).toBe('ok')
    const features = [8.3252, 41, 6.98, 1.02, 322, 2.55, 37.88, -122.23]
    const predicted = await fetch(`${url}/predict`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ features }) })
    expect(predicted.status).toBe(200)
    expect((await predicted.json()) as { prediction: number }).toEqual({ prediction: expect.closeTo(4.99, 1) })
    const image = readFileSync(join(import.meta.dirname, '../fixtures/ocr/hello-world.png'))
    const direction = await fetch(`${url}/ocr`, { method: 'POST', headers: { 'content-type': 'image/png' }, body: image })
    expect(await direction.json()).toMatchObject({ angle: 0 })
  })

  it('stops workerd when it is stopped itself', async () => {
    const group = server.child.pid!
    const exited = new Promise((resolve) => server.child.once('exit', resolve))
    // The script alone, not its group: workerd must go with it.
    process.kill(group, 'SIGTERM')
    await exited
    await waitFor(() => !groupAlive(group), "the script's process group to have no process left")
  })
})

/** Whether any process of the group is left (signal 0 checks without signalling). */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0)
    return true
  } catch {
    return false
  }
}
