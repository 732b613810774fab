/**
 * The OCR recognizer and detector called in process, as the pipeline calls
 * them, by 64 callers in a closed loop: the inputs the pipeline hands them
 * for the accuracy pages (test/fixtures/ocr-pages), recorded once by running
 * it, and each setting's items/s, settings taking turns round by round. No
 * HTTP: a page's detection or a line's recognition takes milliseconds, which
 * HTTP would not change. bench/adaptive-stages.ts compares batch sizes with
 * it, bench/native.ts runtimes.
 */
import { readFileSync } from 'node:fs'
import { Replica } from '../src/deployment/replica.js'
import { makeHandle, type DeploymentHandle } from '../src/deployment/handle.js'
import type { Deployment, InstanceOf } from '../src/index.js'
import { ocrDirection } from '../examples/ocr-direction/classifier.js'
import type { RgbImage } from '../examples/ocr-direction/image.js'
import { textDetector, type DetectionInput } from '../examples/ocr/detector.js'
import { OcrPipeline } from '../examples/ocr/pipeline.js'
import { textRecognizer } from '../examples/ocr/recognizer.js'
import { median, nearestMedian, percentile } from './lib.js'

const CALLERS = 64

export function instanceOf<D extends Deployment>(deployment: D): InstanceOf<D> {
  return new Replica(deployment, 0, {}).instance() as InstanceOf<D>
}

/** A handle that calls the instance in this thread and hands each call's arguments to `record`. */
function recordingHandle<D extends Deployment>(deployment: D, record: (args: unknown[]) => void): DeploymentHandle<InstanceOf<D>> {
  const instance = instanceOf(deployment) as Record<string, (...args: unknown[]) => unknown>
  return makeHandle<InstanceOf<D>>(async (method, args) => {
    record(args)
    return { ok: true, value: await instance[method]!(...args) }
  })
}

/** What the pipeline asks of the detector and of the recognizer for every accuracy page. */
export async function recordInputs(): Promise<{ pages: DetectionInput[]; lines: RgbImage[] }> {
  const dir = new URL('../test/fixtures/ocr-pages/', import.meta.url)
  const manifest = JSON.parse(readFileSync(new URL('manifest.json', dir), 'utf8')) as { pages: { file: string }[] }
  const pages: DetectionInput[] = []
  const lines: RgbImage[] = []
  const pipeline = new OcrPipeline(
    recordingHandle(textDetector, (args) => pages.push(args[0] as DetectionInput)),
    recordingHandle(ocrDirection, () => undefined),
    recordingHandle(textRecognizer, (args) => lines.push(args[0] as RgbImage)),
  )
  for (const { file } of manifest.pages) {
    const body = new Uint8Array(readFileSync(new URL(file, dir)))
    await pipeline.fetch(
      new Request('http://in-process/ocr', { method: 'POST', body, headers: { 'content-type': file.endsWith('.jpg') ? 'image/jpeg' : 'image/png' } }),
    )
  }
  return { pages, lines }
}

export interface Setting {
  setting: string
  call: (input: never) => Promise<unknown>
}

/**
 * 64 callers, each calling with the next input as soon as its last call
 * answered, until `seconds` have passed; the calls still out then are waited
 * for, and every call counts, over the time to the last answer. Counting
 * only the answers inside the window cut the detector's rows, about 30
 * pages in 5 s answered a few pages a batch, into steps of a whole batch:
 * 0.2 pages/s, a tenth of the row. Every row starts from the first input,
 * so a model's rows run the same inputs in the same order.
 */
export async function closedLoop(setting: Setting, inputs: readonly unknown[], seconds: number): Promise<{ itemsPerS: number; p99Ms: number }> {
  const latencies: number[] = []
  let next = 0
  const t0 = performance.now()
  const end = t0 + seconds * 1000
  let lastAnswer = t0
  await Promise.all(
    Array.from({ length: CALLERS }, async () => {
      while (performance.now() < end) {
        const start = performance.now()
        await setting.call(inputs[next++ % inputs.length] as never)
        lastAnswer = performance.now()
        latencies.push(lastAnswer - start)
      }
    }),
  )
  return { itemsPerS: latencies.length / ((lastAnswer - t0) / 1000), p99Ms: percentile(latencies, 99) }
}

/** Each setting in turn, `rounds` times after a warm-up each; the row of a setting holds its median round. */
export async function measure(model: string, settings: Setting[], inputs: readonly unknown[], { durationS, rounds }: { durationS: number; rounds: number }) {
  for (const setting of settings) await closedLoop(setting, inputs, Math.min(2, durationS))
  const runs = settings.map((): { itemsPerS: number; p99Ms: number }[] => [])
  for (let round = 0; round < rounds; round++) {
    for (const [i, setting] of settings.entries()) runs[i]!.push(await closedLoop(setting, inputs, durationS))
    process.stderr.write(`  ${model} round ${round + 1}: ${runs.map((r) => r.at(-1)!.itemsPerS.toFixed(1)).join(', ')} items/s\n`)
  }
  return settings.map((setting, i) => {
    const perRound = runs[i]!.map((r) => r.itemsPerS)
    // The round nearest the median gives the p99.
    const mid = nearestMedian(runs[i]!, (r) => r.itemsPerS)
    return {
      runtime: 'node',
      model,
      setting: setting.setting,
      requestsPerS: median(perRound),
      p99Ms: mid.p99Ms,
      roundsRequestsPerS: perRound,
      concurrency: CALLERS,
      inProcess: true,
    }
  })
}
