/** edgeserve on Cloudflare Workers: replicas as Durable Objects. */
export { durableObject, type ReplicaDurableObject, type ReplicaDurableObjectClass, type ReplicaObjectState } from './durable-object.js'
export { serveWorker, type ServeWorkerOptions, type WorkerHandler } from './worker.js'
