/**
 * edgeserve run examples/ocr/app.ts
 *   curl -X POST http://127.0.0.1:8000/ocr -H 'content-type: image/png' --data-binary @test/fixtures/ocr-pages/receipt.png
 *
 * Three deployments composed through handles: `POST /ocr` is the pipeline's
 * ingress; the detector, the direction classifier and the recognizer are
 * reached through handles, and are routed here too so that a runtime
 * (serve() on Node, serveWorker() on Workers) hosts them.
 */
import { Hono } from 'hono'
import { ingress } from 'edgeserve'
import { ocrDirection } from '../ocr-direction/classifier.js'
import { textDetector } from './detector.js'
import { ocrPipeline } from './pipeline.js'
import { textRecognizer } from './recognizer.js'

/** The deployments `POST /ocr` calls through handles. */
export const ocrStages = [textDetector, ocrDirection, textRecognizer]

export const app = new Hono().post('/ocr', ingress(ocrPipeline)).post('/ocr/direction', ingress(ocrDirection))
export default app
