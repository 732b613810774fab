/**
 * The demo app on Cloudflare Workers (`npm run dev`, `wrangler deploy`): the
 * same app as `npm start`, with each deployment's replicas in Durable Objects.
 * wrangler.toml binds each class below under the deployment's name.
 */
import { durableObject, serveWorker } from 'edgeserve/workers'
// The live dashboard at /-/dashboard: a Worker ships the page only when it imports it.
import { dashboard } from 'edgeserve/dashboard'
import { app } from './app.js'
import { adder } from '../adder/batch-adder.js'
import { originAdder } from '../adder-origin/origin-adder.js'
import { scaledAdder } from '../autoscaling/scaled-adder.js'
import { housePrice } from '../house-price/predictor.js'
import { regionalHousePrice } from '../regional-house-price/predictor.js'
import { textGenerator } from '../text-generator/generator.js'
import { ocrDirection } from '../ocr-direction/classifier.js'
import { textDetector } from '../ocr/detector.js'
import { ocrPipeline } from '../ocr/pipeline.js'
import { textRecognizer } from '../ocr/recognizer.js'

// The app, plus /-/metrics, /-/healthz and /-/routes, gathered from every replica's object.
export default serveWorker(app, { dashboard })

// One Durable Object class per deployment; each replica is an object of it.
export const BatchAdder = durableObject(adder)
export const OriginAwareAdder = durableObject(originAdder)
// Autoscaled: its replicas and its coordinator ("ScaledAdder/autoscaler") are objects of this one class.
export const ScaledAdder = durableObject(scaledAdder)
export const HousePricePredictor = durableObject(housePrice)
// Multiplexed (a model per region) and autoscaled: replicas and coordinator share the class too.
export const RegionalHousePrice = durableObject(regionalHousePrice)
export const BatchTextGenerator = durableObject(textGenerator)
export const TextDirectionClassifier = durableObject(ocrDirection)
export const OcrPipeline = durableObject(ocrPipeline)
export const TextDetector = durableObject(textDetector)
export const TextRecognizer = durableObject(textRecognizer)
