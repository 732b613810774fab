// One instance of a model on a Node worker thread (see pool.ts): its own
// onnxruntime runtime (onnxruntime-node or onnxruntime-web) and session,
// running the slices of batches the pool sends. Plain JavaScript, so that it
// starts without a TypeScript loader, in the package and from source alike.
//
// workerData: { runtime, bytes, numThreads, providers, sessionOptions }
// in:  { id, feeds: { [name]: { type, dims, data } } }
// out: { ready: { provider, numThreads, inputNames, outputNames, inputMetadata, outputMetadata } }
//      or { failed: { name, message } }, once; then { id, outputs } or { id, error: { name, message } } per run.
import { parentPort, workerData } from 'node:worker_threads'

const native = workerData.runtime === 'onnxruntime-node'
// onnxruntime-node is CommonJS: its exports are the module's default, or its named exports where a loader gives no default.
const nativeModule = native ? await import('onnxruntime-node') : undefined
const ort = nativeModule ? (nativeModule.default ?? nativeModule) : await import('onnxruntime-web')

function errorOf(error) {
  return { name: error?.name ?? 'Error', message: error?.message ?? String(error) }
}

/** A typed array's buffer may move to the other thread when the array is all of it; else it is copied. */
function movable(data) {
  if (Array.isArray(data)) return { data, transfer: [] }
  const own = data.byteOffset === 0 && data.byteLength === data.buffer.byteLength && data.buffer instanceof ArrayBuffer
  const copy = own ? data : data.slice()
  return { data: copy, transfer: [copy.buffer] }
}

async function createSession() {
  // onnxruntime-node takes threads per session; onnxruntime-web per thread, before its first session.
  const threads = native ? { intraOpNumThreads: workerData.numThreads } : {}
  if (!native) ort.env.wasm.numThreads = workerData.numThreads
  let lastError
  for (const provider of workerData.providers) {
    try {
      const options = { ...workerData.sessionOptions, ...threads, executionProviders: [provider] }
      return { session: await ort.InferenceSession.create(workerData.bytes, options), provider }
    } catch (error) {
      lastError = error
    }
  }
  throw lastError
}

let session
try {
  const created = await createSession()
  session = created.session
  parentPort.postMessage({
    ready: {
      provider: created.provider,
      numThreads: native ? workerData.numThreads : (ort.env.wasm.numThreads ?? workerData.numThreads),
      inputNames: session.inputNames,
      outputNames: session.outputNames,
      inputMetadata: session.inputMetadata,
      outputMetadata: session.outputMetadata,
    },
  })
} catch (error) {
  parentPort.postMessage({ failed: errorOf(error) })
}

if (session) {
  // One run at a time, in the order they came: a session runs one batch at a
  // time, and a pool may send the next slice before this one is done.
  let previous = Promise.resolve()
  parentPort.on('message', (message) => {
    previous = previous.then(() => runSlice(message))
  })
}

async function runSlice({ id, feeds }) {
  try {
    const tensors = {}
    for (const [name, { type, dims, data }] of Object.entries(feeds)) tensors[name] = new ort.Tensor(type, data, dims)
    const results = await session.run(tensors)
    const outputs = {}
    const transfer = []
    for (const [name, tensor] of Object.entries(results)) {
      const moved = movable(tensor.data)
      outputs[name] = { type: tensor.type, dims: tensor.dims, data: moved.data }
      transfer.push(...moved.transfer)
    }
    parentPort.postMessage({ id, outputs }, transfer)
  } catch (error) {
    parentPort.postMessage({ id, error: errorOf(error) })
  }
}
