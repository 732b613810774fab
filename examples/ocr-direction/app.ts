/**
 * edgeserve run examples/ocr-direction/app.ts
 *   curl -X POST http://127.0.0.1:8000/ocr/direction -H 'content-type: image/png' \
 *     --data-binary @test/fixtures/ocr/<image>.png
 */
import { Hono } from 'hono'
import { ingress } from 'edgeserve'
import { ocrDirection } from './classifier.js'

export const app = new Hono().post('/ocr/direction', ingress(ocrDirection))
export default app
