/**
 * Clients that misbehave, in real workerd served directly
 * (bench/workerd-direct.ts), where wrangler's proxy would shield the Worker
 * from them: one that goes away while its request waits in a Durable
 * Object's batch queue (workerd's own socket notices a client that resets
 * its connection; the proxy passes nothing on), and one that sends its body
 * slowly (the proxy reads a body whole before it forwards the request).
 */
import { describe, expect, it } from 'vitest'
import { RawConnection } from '../support/raw-connection.js'
import { describeSlowBody } from '../support/slow-body-suite.js'
import { waitFor } from '../support/wait-for.js'
import { workerdDirectForTests } from '../support/workerd-direct.js'

const direct = workerdDirectForTests()

const json = async <T>(path: string, init?: RequestInit) => (await (await fetch(direct.url + path, init)).json()) as T

describe('Workers: a client that leaves while its request is queued in the object', () => {
  it('takes its call out of the batch queue, so it never runs; the others are answered, and so is the next request', async () => {
    // The first request's batch runs and is held: the calls after it queue.
    const first = json<{ id: number }>('/held?id=0')
    await waitFor(async () => (await json<number[][]>('/held/ran')).length === 1, 'the first batch to be running')
    const leaving = await RawConnection.open(direct.url)
    const staying = await RawConnection.open(direct.url)
    await leaving.send('GET /held?id=1 HTTP/1.1\r\nhost: edgeserve.test\r\n\r\n')
    await staying.send('GET /held?id=2 HTTP/1.1\r\nhost: edgeserve.test\r\n\r\n')
    await waitFor(async () => (await json<number>('/held/queued')) === 2, 'both calls to be queued in the object')

    leaving.reset()
    // With the enable_request_signal flag the object's request aborts, and its call leaves the queue.
    await waitFor(async () => (await json<number>('/held/queued')) === 1, 'the call of the client that left to leave the queue')

    await json('/held/release', { method: 'POST' })
    expect(await first).toEqual({ id: 0 })
    const answer = await staying.next()
    expect([answer.status, JSON.parse(answer.body)]).toEqual([200, { id: 2 }])
    // The call of the client that left ran in no batch.
    expect(await json<number[][]>('/held/ran')).toEqual([[0], [2]])
    expect(await json<{ id: number }>('/held?id=3')).toEqual({ id: 3 })
    staying.close()
  })
})

describeSlowBody('workerd', () => direct.url)
