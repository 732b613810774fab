/**
 * Shared calls in real workerd: the requests a Worker isolate receives
 * together for one replica reach its Durable Object in one call, and each
 * still gets its own answer, whoever sent the call.
 */
import { describe, expect, it } from 'vitest'
import { workerForTests } from '../support/workerd.js'
import { waitFor } from '../support/wait-for.js'

const worker = workerForTests(new URL('./wrangler.toml', import.meta.url))

const calls = async () => (await (await fetch(`${worker.url}/shared/calls`)).json()) as string[][]

describe('Workers: shared calls into a Durable Object', () => {
  it('carries concurrent requests in fewer calls than requests, and answers each its own', async () => {
    const before = (await calls()).length
    const answers = await Promise.all(Array.from({ length: 32 }, (_, i) => fetch(`${worker.url}/shared/echo?id=g${i}&ms=20`).then((r) => r.text())))
    expect(answers).toEqual(Array.from({ length: 32 }, (_, i) => `echo g${i}`))
    const made = (await calls()).slice(before)
    // Every request once, in fewer calls than requests.
    expect(made.flat().sort()).toEqual(Array.from({ length: 32 }, (_, i) => `g${i}`).sort())
    expect(made.length).toBeLessThan(32)
  })

  it('carries POST bodies, each back to its own request', async () => {
    const bodies = Array.from({ length: 12 }, (_, i) => JSON.stringify({ n: i }))
    const answers = await Promise.all(bodies.map((body) => fetch(`${worker.url}/shared/echo`, { method: 'POST', body }).then((r) => r.text())))
    expect(answers).toEqual(bodies.map((body) => `echo ${body}`))
  })

  it('answers the requests a call carried when the client of the request that sent it leaves', async () => {
    const before = (await calls()).length
    const controllers = Array.from({ length: 8 }, () => new AbortController())
    const answers = controllers.map((controller, i) =>
      fetch(`${worker.url}/shared/echo?id=d${i}&ms=600`, { signal: controller.signal }).then(
        async (r) => ({ status: r.status, text: await r.text() }),
        () => 'left' as const,
      ),
    )
    // The object records a call as it arrives: the first request in it is the one whose context sent it.
    let shared: string[] | undefined
    await waitFor(async () => (shared = (await calls()).slice(before).find((call) => call.length > 1)) !== undefined, 'a call carrying two requests or more')
    const [sender, ...carried] = shared!
    controllers[Number(sender!.slice(1))]!.abort()
    const settled = await Promise.all(answers)
    for (const id of carried) expect(settled[Number(id.slice(1))]).toEqual({ status: 200, text: `echo ${id}` })
  })
})
