/**
 * The demo app: every example deployment under one Hono app. The same file
 * is served by `npm start` (Node) and `npm run dev` (wrangler).
 */
import { Hono } from 'hono'
import { app as adder } from '../adder/app.js'
import { app as adderOrigin } from '../adder-origin/app.js'

export const app = new Hono()
app.get('/', (c) =>
  c.json({
    name: 'edgeserve demo',
    routes: ['GET /adder?number=41', 'GET /adder-origin?number=41', 'GET /adder-origin/handle?number=41'],
  }),
)
app.route('/', adder)
app.route('/', adderOrigin)

export default app
