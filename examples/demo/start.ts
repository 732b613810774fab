/** `npm start`: the demo app on Node at http://127.0.0.1:8000 (PORT overrides). */
import { serve } from 'edgeserve/node'
import { app } from './app.js'

const server = await serve(app, { port: Number(process.env.PORT ?? 8000), hostname: process.env.HOST ?? '127.0.0.1' })
console.log(`edgeserve demo listening on ${server.url}`)
