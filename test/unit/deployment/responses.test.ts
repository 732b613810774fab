import { describe, expect, it, vi } from 'vitest'
import { errorResponse } from '../../../src/deployment/responses.js'
import { answerOf, responseOf } from '../../../src/deployment/replica.js'
import { BackPressureError, HTTPError, ReplicaUnavailableError } from '../../../src/index.js'

describe('errorResponse', () => {
  it('tells a client when to retry a 503: the back-pressure estimate rounded up, else 1 s', async () => {
    const busy = errorResponse(new BackPressureError('the queue is full', 2.2))
    expect([busy.status, busy.headers.get('retry-after')]).toEqual([503, '3'])
    const soon = errorResponse(new BackPressureError('the queue is full', 0.1))
    expect(soon.headers.get('retry-after')).toBe('1')
    const restarting = errorResponse(new ReplicaUnavailableError('the replica is restarting'))
    expect([restarting.status, restarting.headers.get('retry-after')]).toEqual([503, '1'])
    expect(await restarting.json()).toEqual({ error: { type: 'ReplicaUnavailableError', message: 'the replica is restarting' } })
  })

  it('sends no Retry-After with an answer that retrying would not change', () => {
    const refused = errorResponse(new HTTPError(400, 'bad input'))
    expect([refused.status, refused.headers.get('retry-after'), refused.headers.get('content-type')]).toEqual([400, null, 'application/json; charset=utf-8'])
  })

  it("answers any other error with a generic 500 and logs it, naming no deployment: a plain route's onError uses it too", async () => {
    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined)
    try {
      const fault = new Error('cannot open /srv/secret/model.onnx')
      const response = errorResponse(fault)
      expect(response.status).toBe(500)
      expect(await response.json()).toEqual({ error: { type: 'InternalServerError', message: 'an internal error occurred while handling this request' } })
      expect(log).toHaveBeenCalledWith('edgeserve: unhandled error while handling a request:', fault)
    } finally {
      log.mockRestore()
    }
  })
})

describe('answerOf', () => {
  it('sends a stream returned by fetch() as bytes, as it came', async () => {
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array([1, 2]))
        controller.close()
      },
    })
    const response = responseOf(answerOf(stream))
    expect([response.status, response.headers.get('content-type')]).toEqual([200, 'application/octet-stream'])
    expect([...new Uint8Array(await response.arrayBuffer())]).toEqual([1, 2])
  })
})
