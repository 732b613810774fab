/** A region's model bytes on Node (and any runtime with a file system). */
import { readFile } from 'node:fs/promises'
import type { Region } from '../regions.js'

export default async function modelBytes(region: Region): Promise<Uint8Array> {
  return new Uint8Array(await readFile(new URL(`./${region}.onnx`, import.meta.url)))
}
