/**
 * The detector, recognizer and character list in a browser, fetched on first
 * use from `models/` beside the page (see examples/shared/page-asset.ts).
 * Each function takes the replica's env for the same signature as the other
 * runtimes' variants; it is not read here.
 */
import { pageAsset } from '../../shared/page-asset.js'

export async function detectorBytes(_env?: unknown): Promise<Uint8Array> {
  return new Uint8Array(await (await pageAsset('ch_PP-OCRv4_det_infer.onnx')).arrayBuffer())
}

export async function recognizerBytes(_env?: unknown): Promise<Uint8Array> {
  return new Uint8Array(await (await pageAsset('ch_PP-OCRv4_rec_infer.onnx')).arrayBuffer())
}

export async function characterList(_env?: unknown): Promise<string> {
  return (await pageAsset('ppocr_keys_v1.txt')).text()
}
