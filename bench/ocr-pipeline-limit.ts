/**
 * The OCR pipeline's limit in process: the served pipeline's own code
 * (`OcrPipeline`: decode, detect, classify, recognize, reading order), with
 * each stage's instance called directly instead of through a handle, so no
 * HTTP, router, replica or handle sits in the way. What serving adds is the
 * distance from this to the served rows.
 */
import { Replica } from '../src/deployment/replica.js'
import { makeHandle, type DeploymentHandle } from '../src/deployment/handle.js'
import type { Deployment, InstanceOf } from '../src/index.js'
import { ocrDirection } from '../examples/ocr-direction/classifier.js'
import { textDetector } from '../examples/ocr/detector.js'
import { OcrPipeline } from '../examples/ocr/pipeline.js'
import { textRecognizer } from '../examples/ocr/recognizer.js'

export interface PipelineLimit {
  pagesPerS: number
  /** Pages read at once when it was reached. */
  concurrency: number
  byConcurrency: { concurrency: number; pagesPerS: number }[]
}

/** A handle that calls the instance's method in this thread: what a handle would reach, minus the way there. */
function directHandle<D extends Deployment>(deployment: D): DeploymentHandle<InstanceOf<D>> {
  const instance = new Replica(deployment, 0, {}).instance() as Record<string, (...args: unknown[]) => unknown>
  return makeHandle<InstanceOf<D>>(async (method, args) => ({ ok: true, value: await instance[method]!(...args) }))
}

/** Best pages/s over concurrency 1, 2 and 4, `pagesPerRow` pages each, after one warm-up round of every page. */
export async function inProcessPipelineLimit(pages: readonly { body: Uint8Array<ArrayBuffer> }[], pagesPerRow: number): Promise<PipelineLimit> {
  const pipeline = new OcrPipeline(directHandle(textDetector), directHandle(ocrDirection), directHandle(textRecognizer))
  const read = (i: number) => pipeline.fetch(new Request('http://in-process/ocr', { method: 'POST', body: pages[i % pages.length]!.body }))
  for (let i = 0; i < pages.length; i++) await read(i)
  const byConcurrency: PipelineLimit['byConcurrency'] = []
  for (const concurrency of [1, 2, 4]) {
    let next = 0
    const t0 = performance.now()
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < pagesPerRow) await read(next++)
      }),
    )
    byConcurrency.push({ concurrency, pagesPerS: pagesPerRow / ((performance.now() - t0) / 1000) })
  }
  const best = byConcurrency.reduce((a, b) => (b.pagesPerS > a.pagesPerS ? b : a))
  return { pagesPerS: best.pagesPerS, concurrency: best.concurrency, byConcurrency }
}
