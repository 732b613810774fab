/**
 * edgeserve run examples/adder-origin/app.ts
 *   curl "http://127.0.0.1:8000/adder-origin?number=1"          (origin: http)
 *   curl "http://127.0.0.1:8000/adder-origin/handle?number=1"   (origin: handle)
 */
import { Hono } from 'hono'
import { errorResponse, getHandle, ingress } from 'edgeserve'
import { parseNumber } from '../adder/batch-adder.js'
import { originAdder } from './origin-adder.js'

export const app = new Hono()
  .get('/adder-origin', ingress(originAdder))
  // The same deployment through a handle, as a driver script would call it.
  .get('/adder-origin/handle', async (c) => {
    try {
      const number = parseNumber(c.req.query('number') ?? null)
      return c.text(String(await getHandle(originAdder, c.env).handleBatch.remote(number)))
    } catch (error) {
      return errorResponse(error)
    }
  })
export default app
