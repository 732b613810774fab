/** edgeserve on Cloudflare Workers: replicas as Durable Objects. */
export { durableObject } from './durable-object.js'
export { serveWorker } from './worker.js'
