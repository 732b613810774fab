/** A region's model bytes on Workers: bundled by wrangler's Data rule for .onnx files. */
import type { Region } from '../regions.js'
import central from './central.onnx'
import north from './north.onnx'
import south from './south.onnx'

const MODELS: Record<Region, ArrayBuffer> = { north, south, central }

export default async function modelBytes(region: Region): Promise<Uint8Array> {
  return new Uint8Array(MODELS[region])
}
