/**
 * The adder alone: edgeserve run examples/adder/app.ts
 * then: curl "http://127.0.0.1:8000/adder?number=41"
 */
import { Hono } from 'hono'
import { ingress } from 'edgeserve'
import { adder } from './batch-adder.js'

export const app = new Hono().get('/adder', ingress(adder))
export default app
