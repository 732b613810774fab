/** The OCR example alone on Node at http://127.0.0.1:8000 (PORT overrides): `npx tsx examples/ocr/start.ts`. */
import { serve } from 'edgeserve/node'
import { app, ocrStages } from './app.js'

const server = await serve(app, { port: Number(process.env.PORT ?? 8000), hostname: process.env.HOST ?? '127.0.0.1', deployments: ocrStages })
console.log(`OCR example listening on ${server.url}; open ${server.url}/ocr`)
