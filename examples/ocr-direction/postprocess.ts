/**
 * Postprocessing for PaddleOCR's text-direction classifier, as in
 * PaddleOCR's ClsPostProcess: argmax -> label, with the score at the argmax.
 *
 * ch_ppocr_mobile_v2.0_cls_infer.onnx already ends in a Softmax (its output
 * `softmax_0.tmp_0` has shape [N, 2]), so its scores are probabilities and are
 * used as they are. Applying softmax again would flatten them towards 0.5.
 */
export const CLS_LABELS = [0, 180] as const

export interface ClsResult {
  angle: 0 | 180
  /** Probability of `angle`, in [0.5, 1]. */
  confidence: number
}

/** Result for the image at `index` in a [N, 2] probability output. */
export function clsPostprocess(probs: ArrayLike<number>, index = 0): ClsResult {
  const p0 = probs[index * 2]
  const p180 = probs[index * 2 + 1]
  if (p0 === undefined || p180 === undefined) throw new RangeError(`no scores for image ${index} in ${probs.length} values`)
  return p180 > p0 ? { angle: 180, confidence: p180 } : { angle: 0, confidence: p0 }
}

/** Results for every image in a [N, 2] probability output. */
export function clsPostprocessBatch(probs: ArrayLike<number>, batch: number): ClsResult[] {
  if (probs.length !== batch * CLS_LABELS.length) throw new RangeError(`expected ${batch}x2 scores, got ${probs.length}`)
  return Array.from({ length: batch }, (_, i) => clsPostprocess(probs, i))
}

/**
 * PaddleOCR rotates a crop only when the label is 180 AND the score exceeds
 * cls_thresh (0.9 by default); exported so callers can apply the same rule.
 */
export const PADDLE_CLS_THRESH = 0.9
export const shouldRotate = (r: ClsResult, thresh = PADDLE_CLS_THRESH): boolean => r.angle === 180 && r.confidence > thresh
