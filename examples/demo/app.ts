/**
 * The demo app: every example deployment under one Hono app. The same app is
 * served by `npm start` (Node) and `npm run dev` (wrangler, examples/demo/worker.ts).
 */
import { Hono } from 'hono'
import { errorResponse, ingress } from 'edgeserve'
import { app as adder } from '../adder/app.js'
import { app as adderOrigin } from '../adder-origin/app.js'
import { app as autoscaledAdder } from '../autoscaling/app.js'
import { housePrice } from '../house-price/predictor.js'
import { regionalHousePrice } from '../regional-house-price/predictor.js'
import { textGenerator } from '../text-generator/generator.js'
import { ocrDirection } from '../ocr-direction/classifier.js'
import { ocrPageResponse } from '../ocr/page.js'
import { ocrPipeline } from '../ocr/pipeline.js'

export const app = new Hono()
// Errors are JSON everywhere, unknown routes and wrong methods included, like the deployments' own.
app.notFound((c) => c.json({ error: { type: 'NotFound', message: 'no such route here; GET / lists the routes' } }, 404))
app.onError((error) => errorResponse(error))
app.get('/', (c) =>
  c.json({
    name: 'edgeserve demo',
    routes: {
      'GET /adder?number=41': 'the batching tutorial: 42, in batches of at most 4',
      'GET /adder-origin?number=41': 'one deployment over HTTP ...',
      'GET /adder-origin/handle?number=41': '... and through a handle; batches never mix the two',
      'GET /adder/autoscaled?number=41': 'the adder, autoscaled: 0 replicas when idle, up to 4 under load',
      'POST /predict {"features": [8 numbers]}': 'house price (MLP, batched whole requests, 32 per batch)',
      'POST /regional/predict {"features": [8 numbers]}, header edgeserve-multiplexed-model-id: north, south or central':
        "a region's own house-price model: one multiplexed, autoscaled deployment serves all three",
      'GET /generate?text=Once+upon+a+time': 'text continuation (char-level LM, continuous batching)',
      'GET /generate/stream?text=Once+upon+a+time': 'the same, streamed as Server-Sent Events',
      'GET /ocr': 'a page to try OCR: upload an image, see the boxes and the text',
      'POST /ocr <PNG or JPEG page>': 'read the text: detector, direction classifier and recognizer composed through handles',
      'POST /ocr/direction <PNG or JPEG>': 'is this text line upright? (PaddleOCR classifier, 32 per batch)',
      'GET /-/dashboard': 'live batching dashboard; also /-/metrics, /-/healthz, /-/routes',
    },
  }),
)
app.route('/', adder)
app.route('/', adderOrigin)
app.route('/', autoscaledAdder)
app.post('/predict', ingress(housePrice))
app.post('/regional/predict', ingress(regionalHousePrice))
app.get('/generate', ingress(textGenerator))
app.get('/generate/stream', ingress(textGenerator))
app.post('/ocr/direction', ingress(ocrDirection))
// The pipeline's stages are bound into it, so serve() and serveWorker() host them too.
app.post('/ocr', ingress(ocrPipeline))
app.get('/ocr', () => ocrPageResponse())

export default app
