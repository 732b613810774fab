import { toRgb } from './rgb.js'
import { HTTPError, deployment, readBody, type DeploymentHandle } from 'edgeserve'
import { ocrDirection, type TextDirectionClassifier } from '../ocr-direction/classifier.js'
import { ImageDecodeError, decodeImage, type RgbImage } from '../ocr-direction/image.js'
import { shouldRotate, type ClsResult } from '../ocr-direction/postprocess.js'
import { clsResize } from '../ocr-direction/preprocess.js'
import { cropQuad, rotateHalf } from './crop.js'
import { resizeForDetection } from './detect-input.js'
import { textDetector, type TextDetector } from './detector.js'
import type { Quad } from './geometry.js'
import { readingOrder } from './reading-order.js'
import { resizeForRecognition } from './recognize-input.js'
import { textRecognizer, type TextRecognizer } from './recognizer.js'

/** Pages are photos and scans: 15 MB covers a 16-megapixel JPEG. */
export const OCR_BODY_LIMIT = 15 * 1024 * 1024
const IMAGE_TYPES = /^(image\/(png|jpeg|jpg)|application\/octet-stream)\s*(;|$)/i
/** PaddleOCR's drop_score: lines read with less confidence are left out. */
export const MIN_LINE_CONFIDENCE = 0.5

export interface OcrLine {
  text: string
  confidence: number
  /** Corners in page pixels: top-left, top-right, bottom-right, bottom-left as found on the page. */
  box: Quad
  /** 180 when the page was upside down (its lines were read turned around). */
  angle: 0 | 180
}

export interface OcrResult {
  /** Rows joined by newlines, boxes within a row by spaces. */
  text: string
  lines: OcrLine[]
}

/**
 * `POST /ocr`: the ingress of a three-deployment pipeline (Ray Serve's model
 * composition). The page's text lines are found by the detector, every line
 * goes to the direction classifier and then to the recognizer at once, and
 * the answers are gathered back in reading order. The lines of one page,
 * and of every page in flight, meet in the recognizer's batches.
 *
 * The stages come through `.bind()`, as Ray's
 * `Ingress.bind(Detector.bind(), ...)`: the runtime hosts every deployment
 * bound here, and the constructor receives handles to them.
 */
export class OcrPipeline {
  constructor(
    private readonly detector: DeploymentHandle<TextDetector>,
    private readonly direction: DeploymentHandle<TextDirectionClassifier>,
    private readonly recognizer: DeploymentHandle<TextRecognizer>,
  ) {}

  async fetch(request: Request): Promise<OcrResult> {
    const type = request.headers.get('content-type')
    if (type !== null && !IMAGE_TYPES.test(type)) {
      throw new HTTPError(415, `expected a PNG or JPEG page (content-type image/png or image/jpeg), received ${JSON.stringify(type.slice(0, 60))}`)
    }
    const bytes = await readBody(request, OCR_BODY_LIMIT)
    if (bytes.byteLength === 0) throw new HTTPError(400, 'the request body is empty: POST a PNG or JPEG page')
    let page: RgbImage
    try {
      page = toRgb(decodeImage(bytes))
    } catch (error) {
      if (error instanceof ImageDecodeError) throw new HTTPError(error.reason === 'too-large' ? 413 : 422, error.message)
      throw error
    }
    return this.read(page)
  }

  /** Read a decoded page. */
  async read(page: RgbImage): Promise<OcrResult> {
    const found = await this.detector.detect.remote({ page: resizeForDetection(page), pageWidth: page.width, pageHeight: page.height })
    const crops = found.map(({ box }) => ({ box, crop: cropQuad(page, box) }))
    const directions = await Promise.all(crops.map(({ crop }) => this.direction.classify.remote(clsResize(crop))))
    const turned = isTurned(crops.map(({ crop }, i) => ({ width: crop.width, direction: directions[i]! })))
    const lines = await Promise.all(
      crops.map(async ({ box, crop }): Promise<OcrLine> => {
        const { text, confidence } = await this.recognizer.recognize.remote(resizeForRecognition(turned ? rotateHalf(crop) : crop))
        return { text, confidence, box, angle: turned ? 180 : 0 }
      }),
    )
    const kept = lines.filter((line) => line.text.trim() !== '' && line.confidence >= MIN_LINE_CONFIDENCE)
    const rows = readingOrder(kept, page.width, page.height, turned)
    return { text: rows.map((row) => row.map((line) => line.text).join(' ')).join('\n'), lines: rows.flat() }
  }
}

/**
 * Is the page upside down? PaddleOCR turns each line on its own classifier
 * verdict, but a long line squeezed into the classifier's 192 px is misjudged
 * now and then, and read upside down it comes out as garbage. A page is
 * turned as a whole, so the lines vote, weighted by their width, each with
 * the verdicts PaddleOCR would act on (above 0.9 confidence).
 */
function isTurned(lines: readonly { width: number; direction: ClsResult }[]): boolean {
  let turned = 0
  let upright = 0
  for (const { width, direction } of lines) {
    if (shouldRotate(direction)) turned += width
    else upright += width
  }
  return turned > upright
}

/**
 * The pipeline as served: its three stages bound in. Bind other variants of
 * the stages for experiments, e.g. the recognizer at a fixed 8 lines per run
 * instead of the size it measures:
 * `deployment(OcrPipeline).bind(textDetector, ocrDirection, textRecognizer.bind({ maxBatchSize: 8, adaptive: false }))`.
 */
export const ocrPipeline = deployment(OcrPipeline, { requestTimeoutS: 60 }).bind(textDetector, ocrDirection, textRecognizer)
