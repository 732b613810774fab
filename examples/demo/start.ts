/** `npm start`: the demo app on Node at http://127.0.0.1:8000 (PORT overrides). */
import { serve } from 'edgeserve/node'
import { app } from './app.js'

// The first command a new user runs: a problem gets a line saying what to do, not a stack trace.
function exit(message: string): never {
  console.error(`edgeserve demo: ${message}`)
  process.exit(1)
}

const portText = process.env.PORT ?? '8000'
const port = Number(portText)
if (!/^\d+$/.test(portText) || port > 65535) exit(`PORT must be a number from 0 to 65535, received ${JSON.stringify(portText)}`)
const hostname = process.env.HOST ?? '127.0.0.1'

const server = await serve(app, { port, hostname }).catch((error: { code?: unknown }) => {
  if (error.code !== 'EADDRINUSE') throw error
  return exit(`port ${port} on ${hostname} is in use; serve the demo on another one with PORT=${port === 65535 ? 8001 : port + 1} npm start`)
})
console.log(`edgeserve demo listening on ${server.url}`)
