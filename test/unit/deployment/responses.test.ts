import { Hono } from 'hono'
import { describe, expect, it, vi } from 'vitest'
import { errorResponse } from '../../../src/errors.js'
import { answerOf, responseOf } from '../../../src/deployment/replica.js'
import { BackPressureError, FailedItemsError, HTTPError, ReplicaUnavailableError, RequestTimeoutError } from '../../../src/index.js'

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

describe("edgeserve's errors thrown in a plain Hono route", () => {
  it("answer with their status and JSON body through Hono's own error handler, with no onError of the app's", async () => {
    const app = new Hono()
      .get('/missing', () => {
        throw new HTTPError(404, 'no model for region east')
      })
      .get('/late', () => {
        throw new RequestTimeoutError()
      })
      .get('/busy', () => {
        throw new BackPressureError('the queue is full', 2)
      })
      // What stack() throws outside a batch for a row that does not fit: its item's own 422.
      .get('/unfit', () => {
        throw new FailedItemsError([[0, new HTTPError(422, 'item has 2 values, but shape [8] needs 8')]])
      })
    const missing = await app.request('/missing')
    expect([missing.status, missing.headers.get('content-type'), await missing.json()]).toEqual([
      404,
      'application/json; charset=utf-8',
      { error: { type: 'HTTPError', message: 'no model for region east' } },
    ])
    const late = await app.request('/late')
    expect([late.status, ((await late.json()) as { error: { type: string } }).error.type]).toEqual([504, 'RequestTimeoutError'])
    const busy = await app.request('/busy')
    expect([busy.status, busy.headers.get('retry-after')]).toEqual([503, '2'])
    const unfit = await app.request('/unfit')
    expect([unfit.status, await unfit.json()]).toEqual([422, { error: { type: 'HTTPError', message: 'item has 2 values, but shape [8] needs 8' } }])
  })
})
