/**
 * edgeserve run examples/regional-house-price/app.ts
 *   curl -X POST http://127.0.0.1:8000/predict -H 'edgeserve-multiplexed-model-id: north' \
 *     -H 'content-type: application/json' -d '{"features": [8.3, 41, 6.9, 1.0, 322, 2.5, 37.88, -122.23]}'
 */
import { Hono } from 'hono'
import { ingress } from 'edgeserve'
import { regionalHousePrice } from './predictor.js'

export const app = new Hono().post('/predict', ingress(regionalHousePrice))
export default app
