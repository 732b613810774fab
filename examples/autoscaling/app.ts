/**
 * The autoscaled adder alone: edgeserve run examples/autoscaling/app.ts
 * then: curl "http://127.0.0.1:8000/adder/autoscaled?number=41"   (the first request starts a replica)
 * and watch /-/dashboard while load runs:
 *   npx autocannon -c 64 -d 20 "http://127.0.0.1:8000/adder/autoscaled?number=1"
 */
import { Hono } from 'hono'
import { ingress } from 'edgeserve'
import { scaledAdder } from './scaled-adder.js'

export const app = new Hono().get('/adder/autoscaled', ingress(scaledAdder))
export default app
