/** The model's bytes on Workers: bundled by wrangler's Data rule for .onnx files. */
import bytes from './house-price.onnx'

export default async function modelBytes(): Promise<Uint8Array> {
  return new Uint8Array(bytes)
}
