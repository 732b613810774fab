/**
 * The demo app on Cloudflare Workers (`npm run dev`, `wrangler deploy`): the
 * same app as `npm start`, with each deployment's replicas in Durable Objects.
 * wrangler.toml binds each class below under the deployment's name.
 */
import { durableObject, serveWorker } from 'edgeserve/workers'
import { app } from './app.js'
import { adder } from '../adder/batch-adder.js'
import { originAdder } from '../adder-origin/origin-adder.js'

export default serveWorker(app)

export const BatchAdder = durableObject(adder)
export const OriginAwareAdder = durableObject(originAdder)
