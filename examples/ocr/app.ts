/**
 * npx tsx examples/ocr/start.ts      (then open http://127.0.0.1:8000/ocr, or:)
 *   curl -X POST http://127.0.0.1:8000/ocr -H 'content-type: image/png' --data-binary @test/fixtures/ocr-pages/receipt.png
 *
 * Three deployments composed through handles: `POST /ocr` is the pipeline's
 * ingress; the detector, the direction classifier and the recognizer are
 * reached through handles only, so the runtime is told to host them:
 * `serve(app, { deployments: ocrStages })` on Node (start.ts),
 * `serveWorker(app, { deployments: ocrStages })` on Workers.
 */
import { Hono } from 'hono'
import { ingress } from 'edgeserve'
import { ocrDirection } from '../ocr-direction/classifier.js'
import { textDetector } from './detector.js'
import { ocrPageResponse } from './page.js'
import { ocrPipeline } from './pipeline.js'
import { textRecognizer } from './recognizer.js'

/** The deployments `POST /ocr` calls through handles. */
export const ocrStages = [textDetector, ocrDirection, textRecognizer]

export const app = new Hono()
  .get('/ocr', () => ocrPageResponse())
  .post('/ocr', ingress(ocrPipeline))
  .post('/ocr/direction', ingress(ocrDirection))
export default app
