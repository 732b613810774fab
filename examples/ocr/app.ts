/**
 * npx edgeserve run examples/ocr/app.ts      (then open http://127.0.0.1:8000/ocr, or:)
 *   curl -X POST http://127.0.0.1:8000/ocr -H 'content-type: image/png' --data-binary @test/fixtures/ocr-pages/receipt.png
 *
 * Three deployments composed through handles: `POST /ocr` is the pipeline's
 * ingress, and the detector, the direction classifier and the recognizer are
 * bound into it (`deployment(OcrPipeline).bind(textDetector, ocrDirection,
 * textRecognizer)`), so `serve(app)` and `serveWorker(app)` find and host
 * them with no list.
 */
import { Hono } from 'hono'
import { ingress } from 'edgeserve'
import { ocrDirection } from '../ocr-direction/classifier.js'
import { ocrPageResponse } from './page.js'
import { ocrPipeline } from './pipeline.js'

export const app = new Hono()
  .get('/ocr', () => ocrPageResponse())
  .post('/ocr', ingress(ocrPipeline))
  .post('/ocr/direction', ingress(ocrDirection))
export default app
