/**
 * The page side of test/browser/ocr-pipeline.test.ts: the OCR example's own
 * pipeline (examples/ocr/pipeline.ts: decode, detector, direction
 * classifier, recognizer, reading order) hosted in the page, one replica of
 * each deployment, reached through a handle as a server would reach it.
 * Bundled by esbuild with the `browser` condition, so `edgeserve/onnx` is
 * src/onnx/browser.ts (WebGPU when an adapter exists) and the models come
 * from `models/` beside the page (examples/*\/model/bytes.browser.ts).
 */
import { getHandle } from 'edgeserve'
import { boundDeployments, type Deployment } from '../../../src/deployment/deployment.js'
import { Replica } from '../../../src/deployment/replica.js'
import { ReplicaSet } from '../../../src/deployment/replica-set.js'
import { ocrPipeline, type OcrResult } from '../../../examples/ocr/pipeline.js'

export interface PipelineReport {
  result: OcrResult
  /** Milliseconds for the page, models loading and (on WebGPU) shaders compiling included. */
  ms: number
}

export interface OcrPipelinePage {
  read(pageUrl: string, contentType: string): Promise<PipelineReport>
}

/** What this script adds to `window` (typed here, not as a global augmentation). */
export interface PageWindow {
  ocrPipelinePage: OcrPipelinePage
}

/** `root` and every deployment bound into it, one replica each, in an env as serve() builds one. */
function hostInPage(root: Deployment): Record<string, unknown> {
  const env: Record<string, unknown> = {}
  for (const deployment of [root, ...boundDeployments(root)]) {
    env[deployment.options.binding] = new ReplicaSet(deployment, [new Replica(deployment, 0, env)])
  }
  return env
}

/**
 * The served pipeline, stages and all, without its 60 s request timeout: that
 * bounds how long a server's client waits, while here the page reads its own
 * image, and on a software GPU its first page compiles every shader on the
 * CPU (about a minute on a busy 2-core machine).
 */
const inPage = ocrPipeline.withOptions({ requestTimeoutS: undefined })
const pipeline = getHandle(inPage, hostInPage(inPage))

async function read(pageUrl: string, contentType: string): Promise<PipelineReport> {
  const response = await fetch(pageUrl)
  if (!response.ok) throw new Error(`could not load ${pageUrl}: ${response.status}`)
  const bytes = await response.arrayBuffer()
  const started = performance.now()
  const result = await pipeline.fetch.remote(
    new Request(new URL('/ocr', location.href), { method: 'POST', body: bytes, headers: { 'content-type': contentType } }),
  )
  return { result, ms: performance.now() - started }
}

;(window as unknown as PageWindow).ocrPipelinePage = { read }
