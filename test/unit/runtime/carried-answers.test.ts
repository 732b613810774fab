/** A Durable Object's side of shared calls: answers carried whole, or kept for their request to claim. */
import { describe, expect, it } from 'vitest'
import { CarriedAnswers } from '../../../src/runtime/workers/carried-answers.js'

const later = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms))
const encoder = new TextEncoder()

describe('CarriedAnswers', () => {
  it('carries ready answers whole: status, headers and body', async () => {
    const answers = await new CarriedAnswers().answer([
      Promise.resolve(new Response('one', { status: 201, headers: { 'x-id': '1' } })),
      Promise.resolve(new Response(null, { status: 204 })),
      Promise.resolve(Response.json({ two: 2 })),
    ])
    expect(answers).toHaveLength(3)
    const [one, none, two] = answers as { status: number; headers: [string, string][]; body: Uint8Array | null }[]
    expect(one!.status).toBe(201)
    expect(one!.headers).toContainEqual(['x-id', '1'])
    expect(new TextDecoder().decode(one!.body!)).toBe('one')
    expect(none).toMatchObject({ status: 204, body: null })
    expect(JSON.parse(new TextDecoder().decode(two!.body!))).toEqual({ two: 2 })
  })

  it('keeps an answer not ready in time for its request to claim, once', async () => {
    const carried = new CarriedAnswers()
    const answers = await carried.answer([later(5, new Response('quick')), later(300, new Response('slow'))])
    expect(answers[0]).toMatchObject({ status: 200 })
    const kept = answers[1] as { claim: number }
    expect(kept.claim).toEqual(expect.any(Number))
    expect(await (await carried.claim(kept.claim)).text()).toBe('slow')
    const again = await carried.claim(kept.claim)
    expect(again.status).toBe(503)
    expect(await again.json()).toMatchObject({ error: { message: `no answer is kept under ${kept.claim}: it was claimed or dropped` } })
  })

  it('hands a streaming answer off with every chunk in order, the one being read included', async () => {
    let push!: (chunk: string | null) => void
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode('first '))
        push = (chunk) => (chunk === null ? controller.close() : controller.enqueue(encoder.encode(chunk)))
      },
    })
    const carried = new CarriedAnswers()
    const [streamed] = await carried.answer([Promise.resolve(new Response(body, { headers: { 'content-type': 'text/event-stream' } }))])
    const response = await carried.claim((streamed as { claim: number }).claim)
    expect(response.headers.get('content-type')).toBe('text/event-stream')
    push('second ')
    push('third')
    push(null)
    expect(await response.text()).toBe('first second third')
  })

  it('keeps an answer too large to carry whole, with its body intact', async () => {
    const large = new Uint8Array(3 * 1024 * 1024).map((_, i) => i % 251)
    const chunks = [large.subarray(0, 1024 * 1024), large.subarray(1024 * 1024, 2 * 1024 * 1024 + 7), large.subarray(2 * 1024 * 1024 + 7)]
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const chunk = chunks.shift()
        if (chunk) controller.enqueue(chunk)
        else controller.close()
      },
    })
    const carried = new CarriedAnswers()
    const [answer] = await carried.answer([Promise.resolve(new Response(body))])
    const read = new Uint8Array(await (await carried.claim((answer as { claim: number }).claim)).arrayBuffer())
    expect(read.byteLength).toBe(large.byteLength)
    expect(Buffer.compare(read, large)).toBe(0)
  })

  it("carries what the object's fetch() threw with workerd's marks, and a failed body as a 500", async () => {
    const overloaded = Object.assign(new Error('Durable Object is overloaded. Too many requests queued.'), { overloaded: true })
    const failing = new ReadableStream({
      pull(controller) {
        controller.error(new Error('the body broke'))
      },
    })
    const [refused, broken] = await new CarriedAnswers().answer([Promise.reject(overloaded), Promise.resolve(new Response(failing))])
    expect(refused).toEqual({
      error: { message: 'Durable Object is overloaded. Too many requests queued.', overloaded: true, retryable: false, durableObjectReset: false },
    })
    expect(broken).toMatchObject({ status: 500 })
  })
})
