/** `npm start`: the demo app on Node at http://127.0.0.1:8000 (PORT overrides). */
import { serve } from 'edgeserve/node'
import { app } from './app.js'
import { housePrice } from '../house-price/predictor.js'
import { regionalHousePrice } from '../regional-house-price/predictor.js'
import { textGenerator } from '../text-generator/generator.js'
import { ocrDirection } from '../ocr-direction/classifier.js'
import { ocrPipeline } from '../ocr/pipeline.js'
import { textDetector } from '../ocr/detector.js'
import { textRecognizer } from '../ocr/recognizer.js'

/**
 * The deployments that run models, each on worker threads of its own. A
 * model run holds the thread it runs on: on the server's thread, every other
 * route would wait behind it (the adder took seconds to answer while OCR read
 * a few pages; docs/benchmarks.md shows the same for one model). The adders
 * stay on the server's thread, where they cost least.
 */
const MODELS = [ocrDirection, textDetector, textRecognizer, ocrPipeline, housePrice, regionalHousePrice, textGenerator]

// The first command a new user runs: a problem gets a line saying what to do, not a stack trace.
function exit(message: string): never {
  console.error(`edgeserve demo: ${message}`)
  process.exit(1)
}

const portText = process.env.PORT ?? '8000'
const port = Number(portText)
if (!/^\d+$/.test(portText) || port > 65535) exit(`PORT must be a number from 0 to 65535, received ${JSON.stringify(portText)}`)
const hostname = process.env.HOST ?? '127.0.0.1'

const threads = { module: new URL('./app.ts', import.meta.url), deployments: MODELS.map((model) => model.name) }
const server = await serve(app, { port, hostname, threads }).catch((error: { code?: unknown }) => {
  if (error.code !== 'EADDRINUSE') throw error
  return exit(`port ${port} on ${hostname} is in use; serve the demo on another one with PORT=${port === 65535 ? 8001 : port + 1} npm start`)
})
console.log(`edgeserve demo listening on ${server.url}`)
