// The entry of a replica's worker thread. Plain JavaScript, so that it loads
// before any TypeScript loader exists: when the worker loads TypeScript (the
// user's module, or edgeserve's own source in its repository) and did not
// inherit tsx, register tsx here, then load the worker (`workerData.worker`,
// worker.js in the package, worker.ts from source). See thread-replica.ts.
import { parentPort, workerData } from 'node:worker_threads'

async function registerTsx() {
  let tsx
  try {
    tsx = await import('tsx/esm/api')
  } catch (error) {
    if (error?.code !== 'ERR_MODULE_NOT_FOUND') throw error
    // Node may strip the user's types by itself (by default from 22.18).
    if (workerData.nodeMayStripTypes && process.features.typescript) return true
    parentPort.postMessage({ type: 'failed', message: workerData.tsxMissing })
    return false
  }
  tsx.register()
  return true
}

if (!workerData.registerTsx || (await registerTsx())) await import(workerData.worker)
