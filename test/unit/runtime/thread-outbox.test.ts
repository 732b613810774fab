import { MessageChannel, type MessagePort } from 'node:worker_threads'
import { afterEach, describe, expect, it } from 'vitest'
import { outboxSender } from '../../../src/runtime/node/threads/outbox.js'
import type { FromWorker, WholeResponse } from '../../../src/runtime/node/threads/protocol.js'

const response = (id: number, text: string): [WholeResponse, ArrayBuffer[]] => {
  const body = new TextEncoder().encode(text).buffer
  return [{ type: 'response', id, status: 200, statusText: '', headers: [], body }, [body]]
}

let channel: MessageChannel
afterEach(() => channel?.port1.close())

/**
 * A real channel: what the sender posts on port1, in the order port2
 * receives it. `settle()` lets the outbox's promise job run, then posts a
 * marker on port1 itself and waits for it: a port delivers in order, so
 * everything the outbox sent has arrived once the marker has.
 */
function received(): { port: MessagePort; messages: FromWorker[]; settle: () => Promise<void> } {
  const { port1, port2 } = (channel = new MessageChannel())
  const messages: FromWorker[] = []
  let marked: () => void = () => undefined
  port2.on('message', (message: FromWorker) => (message.type === 'ready' ? marked() : messages.push(message)))
  const settle = async () => {
    await Promise.resolve()
    const arrived = new Promise<void>((resolve) => (marked = resolve))
    port1.postMessage({ type: 'ready' } satisfies FromWorker)
    await arrived
  }
  return { port: port1, messages, settle }
}

describe('a replica thread’s outbox', () => {
  it('sends the whole responses posted together as one message, bodies transferred', async () => {
    const { port, messages, settle } = received()
    const post = outboxSender(port)
    const [first, firstTransfer] = response(1, 'one')
    post(first, firstTransfer)
    post(...response(2, 'two'))
    // Transferred once sent, not before: the outbox holds them until its promise job.
    expect(first.body!.byteLength).toBe(3)
    await settle()
    expect(first.body!.byteLength).toBe(0)
    expect(messages).toHaveLength(1)
    const gathered = messages[0] as Extract<FromWorker, { type: 'responses' }>
    expect(gathered.type).toBe('responses')
    expect(gathered.responses.map((r) => [r.id, new TextDecoder().decode(r.body!)])).toEqual([
      [1, 'one'],
      [2, 'two'],
    ])
  })

  it('sends a lone response as it is', async () => {
    const { port, messages, settle } = received()
    outboxSender(port)(...response(7, 'seven'))
    await settle()
    expect(messages.map((m) => m.type)).toEqual(['response'])
  })

  it('sends waiting responses before any other message, so the server sees the order they were posted in', async () => {
    const { port, messages, settle } = received()
    const post = outboxSender(port)
    post(...response(1, 'one'))
    post({ type: 'stopped' })
    post(...response(2, 'two'))
    await settle()
    expect(messages.map((m) => (m.type === 'response' ? `response ${m.id}` : m.type))).toEqual(['response 1', 'stopped', 'response 2'])
  })

  it('throws where a message that cannot be cloned is posted', () => {
    const { port } = received()
    const post = outboxSender(port)
    expect(() => post({ type: 'outcome', id: 1, outcome: { ok: true, value: () => 1 } as never })).toThrow(/could not be cloned/)
  })
})
