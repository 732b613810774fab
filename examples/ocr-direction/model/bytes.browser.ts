/** The classifier's bytes in a browser, fetched on first use from `models/` beside the page (see examples/shared/page-asset.ts). */
import { pageAsset } from '../../shared/page-asset.js'

export default async function modelBytes(): Promise<Uint8Array> {
  return new Uint8Array(await (await pageAsset('ch_ppocr_mobile_v2.0_cls_infer.onnx')).arrayBuffer())
}
