// The entry of a replica's worker thread. Plain JavaScript, so that it loads
// before any TypeScript loader exists: when the server thread was not started
// through tsx (vitest, or `node` with another loader), register tsx here, then
// load the TypeScript worker.
import { workerData } from 'node:worker_threads'

if (workerData?.registerTsx) {
  const { register } = await import('tsx/esm/api')
  register()
}
await import('./worker.ts')
