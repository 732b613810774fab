/** Model multiplexing on Node, in process and on worker threads (the id crosses to the thread with the call). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { serve, type RunningServer } from '../../src/runtime/node/index.js'
import { tenantApp } from '../support/tenant-app.js'
import { describeMultiplexing } from '../support/multiplexing-suite.js'
import { RawConnection } from '../support/raw-connection.js'

let inProcess: RunningServer
let onThreads: RunningServer

beforeAll(async () => {
  inProcess = await serve(tenantApp, { port: 0, name: 'multiplexing-node', handleSignals: false })
  onThreads = await serve(tenantApp, {
    port: 0,
    name: 'multiplexing-threads',
    handleSignals: false,
    threads: { module: new URL('../support/tenant-app.ts', import.meta.url) },
  })
})

afterAll(async () => {
  await inProcess?.close()
  await onThreads?.close()
})

describeMultiplexing('Node, in process', () => inProcess.url)
describeMultiplexing('Node, on worker threads', () => onThreads.url)

describe('a bad model id on a kept-alive connection', () => {
  it('gets its 400 and the next request on the connection is answered', async () => {
    const connection = await RawConnection.open(inProcess.url)
    await connection.write(`GET /tenants HTTP/1.1\r\nHost: 127.0.0.1\r\nedgeserve-multiplexed-model-id: \r\n\r\n`)
    expect((await connection.next()).status).toBe(400)
    await connection.write(`GET /tenants?x=5 HTTP/1.1\r\nHost: 127.0.0.1\r\nedgeserve-multiplexed-model-id: acme\r\n\r\n`)
    const answer = await connection.next()
    expect(answer.status).toBe(200)
    expect(JSON.parse(answer.body)).toMatchObject({ x: 5, model: 'acme' })
    expect(connection.end).toBe('open')
    connection.close()
  })
})
